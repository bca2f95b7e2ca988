#ifndef VELVET_CGLSLANG_SHIM_H
#define VELVET_CGLSLANG_SHIM_H
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <spirv-tools/libspirv.h>
#endif
