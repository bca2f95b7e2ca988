#ifndef VELVET_CVULKAN_SHIM_H
#define VELVET_CVULKAN_SHIM_H
#include <vulkan/vulkan.h>

// Macros Swift cannot import.
static inline uint32_t velvet_vk_make_api_version(uint32_t variant, uint32_t major, uint32_t minor, uint32_t patch) {
    return VK_MAKE_API_VERSION(variant, major, minor, patch);
}
static inline uint32_t velvet_vk_api_major(uint32_t v) { return VK_API_VERSION_MAJOR(v); }
static inline uint32_t velvet_vk_api_minor(uint32_t v) { return VK_API_VERSION_MINOR(v); }
static inline uint32_t velvet_vk_api_patch(uint32_t v) { return VK_API_VERSION_PATCH(v); }
#endif
