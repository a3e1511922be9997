/* Session handles (l_session.c), for the modules that make or find sessions. */
#ifndef TFDEV_BINDINGS_L_SESSION_H
#define TFDEV_BINDINGS_L_SESSION_H

#include "l_common.h"

/* Sessions (l_session.c). push takes ownership of s: the userdata frees it on close or collection.
 * test returns the session at idx, or NULL when it is not a session or is closed. */
void tfdev_push_session(lua_State *L, tfd_session *s);
tfd_session *tfdev_test_session(lua_State *L, int idx);

#endif
