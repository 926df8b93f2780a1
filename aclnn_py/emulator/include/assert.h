#if defined(__has_include) && __has_include(<aclnn_emu_shield_push.h>)  // the user's plain-named macros hidden
#include <aclnn_emu_shield_push.h>
#endif
// Emulator shim for <assert.h>: the system header, then (once the emulator is loaded) the
// emulator's assert, which records an error for the block instead of aborting the process.
#include_next <assert.h>
#if defined(__EMU_ASSERT_READY)
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : ::__emu::assert_fail(#e, __FILE__, __LINE__))
#endif
#endif

#if defined(__has_include) && __has_include(<aclnn_emu_shield_pop.h>)
#include <aclnn_emu_shield_pop.h>
#endif
