#define _GNU_SOURCE
#include "CSystemShims.h"
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <string.h>
#include <pthread.h>

int harrec_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int harrec_errno(void) { return errno; }

int harrec_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static volatile int harrec_signal_fd = -1;
static _Atomic unsigned long harrec_signal_total = 0;

unsigned long harrec_shutdown_signals_received(void) { return harrec_signal_total; }

static void harrec_shutdown_handler(int signo) {
    (void)signo;
    int saved = errno;
    harrec_signal_total++;
    uint64_t one = 1;
    if (harrec_signal_fd >= 0) {
        ssize_t ignored = write(harrec_signal_fd, &one, sizeof one);
        (void)ignored;
    }
    errno = saved;
}

int harrec_install_shutdown_signals(int fd) {
    harrec_signal_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = harrec_shutdown_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGINT, &action, NULL) != 0) return -1;
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    // A closed terminal: stop and write the HAR, as for Ctrl-C (by default it kills the process).
    if (sigaction(SIGHUP, &action, NULL) != 0) return -1;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

void harrec_retain_freed_memory(void) {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int harrec_set_thread_name(unsigned long thread, const char *name) {
    return pthread_setname_np((pthread_t)thread, name);
}

int harrec_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
}
