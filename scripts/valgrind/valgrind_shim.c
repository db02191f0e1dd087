/* Preloaded by scripts/callgrind-requests into gentle-bench under valgrind, and used only there.

   valgrind 3.19 writes into the mask passed to rt_sigsuspend (sanitize_client_sigmask);
   libdispatch passes a mask in read-only memory, so valgrind itself segfaults.
   This shim passes a writable copy. */
#define _GNU_SOURCE
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
}

/* Under valgrind the client's RLIMIT_NOFILE is lowered and valgrind's own descriptors sit above it,
   yet /proc/self/fd lists them; Foundation's Process adds a close action for every listed fd and
   glibc refuses those >= getdtablesize() with EBADF, so Process.run fails. Skip such fds. */
#include <spawn.h>
#include <dlfcn.h>
int posix_spawn_file_actions_addclose(posix_spawn_file_actions_t *actions, int fd) {
    static int (*real)(posix_spawn_file_actions_t *, int);
    if (!real) real = (int (*)(posix_spawn_file_actions_t *, int))dlsym(RTLD_NEXT, "posix_spawn_file_actions_addclose");
    if (fd >= getdtablesize()) return 0;
    return real(actions, fd);
}
