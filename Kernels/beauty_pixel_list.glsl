// A list of pixels built on the GPU by one pass and worked through by later ones (spot
// removal's candidates and fills). Its head is the indirect dispatch of those passes: the
// builder adds a workgroup for every PIXEL_LIST_GROUP pixels it lists, so a later pass runs
// only as many invocations as there are pixels. The host fills the head with (0, 1, 1, 0)
// first and sizes the list for every pixel it may hold (a pixel is listed at most once).

const uint PIXEL_LIST_GROUP = 256u;  // invocations in a 16x16 workgroup

// Declares the list `instance` (block `Name`) at `bindingIndex`.
#define PIXEL_LIST(Name, instance, bindingIndex) \
    layout(std430, binding = bindingIndex) buffer Name { \
        uint groupsX; uint groupsY; uint groupsZ; /* a VkDispatchIndirectCommand */ \
        uint count; \
        uint pixels[]; /* x | y << 16 */ \
    } instance

#define PIXEL_LIST_APPEND(list, pixel) { \
    uint slot_ = atomicAdd(list.count, 1u); \
    if (slot_ % PIXEL_LIST_GROUP == 0u) { \
        atomicAdd(list.groupsX, 1u); \
    } \
    list.pixels[slot_] = uint((pixel).x) | (uint((pixel).y) << 16); \
}

// This invocation's place in a list dispatched over it.
uint pixelListIndex() {
    return gl_WorkGroupID.x * PIXEL_LIST_GROUP + gl_LocalInvocationIndex;
}

ivec2 pixelListEntry(uint packed) {
    return ivec2(int(packed & 0xffffu), int(packed >> 16));
}
