// Subgroup operations where the driver has GL_KHR_shader_subgroup (the H200's does; llvmpipe's
// does not): put in front of a kernel's source, before any other token, so that the extension
// directives come first. SUBGROUPS is then defined where the kernel may use them (NO_SUBGROUPS
// forces the fallback).
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#if defined(GL_KHR_shader_subgroup_basic) && !defined(NO_SUBGROUPS)
#define SUBGROUPS 1
#endif
