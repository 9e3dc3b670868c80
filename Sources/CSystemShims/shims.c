#define _GNU_SOURCE
#include "CSystemShims.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <pthread.h>
#ifdef __linux__
#include <malloc.h>
#endif

int harrec_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int harrec_errno(void) { return errno; }

int harrec_sock_stream(void) { return SOCK_STREAM; }

#ifndef __linux__
/// Non-blocking, close-on-exec and no SIGPIPE on an fd made without them; closes it on failure.
static int harrec_prepare_socket(int fd) {
    int one = 1;
    if (harrec_set_nonblocking(fd) != 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0
        || setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}
#endif

int harrec_stream_socket(int family) {
#ifdef __linux__
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
    int fd = socket(family, SOCK_STREAM, 0);
    return fd < 0 ? fd : harrec_prepare_socket(fd);
#endif
}

int harrec_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
#ifdef __linux__
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
    int accepted = accept(fd, address, length);
    return accepted < 0 ? accepted : harrec_prepare_socket(accepted);
#endif
}

int harrec_send_flags(void) {
#ifdef MSG_NOSIGNAL
    return MSG_NOSIGNAL;
#else
    return 0;
#endif
}

int harrec_waker_open(int fds[2]) {
#ifdef __linux__
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return -1;
    fds[0] = fd;
    fds[1] = fd;
    return 0;
#else
    if (pipe(fds) != 0) return -1;
    for (int k = 0; k < 2; k++) {
        if (harrec_set_nonblocking(fds[k]) != 0 || fcntl(fds[k], F_SETFD, FD_CLOEXEC) != 0) {
            int saved = errno;
            close(fds[0]);
            close(fds[1]);
            errno = saved;
            return -1;
        }
    }
    return 0;
#endif
}

void harrec_waker_fire(int fd) {
#ifdef __linux__
    uint64_t one = 1;
    ssize_t ignored = write(fd, &one, sizeof one);
#else
    // A full pipe already wakes the reader: the byte that did not fit is not needed.
    unsigned char one = 1;
    ssize_t ignored = write(fd, &one, 1);
#endif
    (void)ignored;
}

unsigned long harrec_waker_take(int fd) {
#ifdef __linux__
    uint64_t count = 0;
    return read(fd, &count, sizeof count) == (ssize_t)sizeof count ? (unsigned long)count : 0;
#else
    unsigned long total = 0;
    unsigned char buffer[256];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0) total += (unsigned long)n;
    return total;
#endif
}

static volatile int harrec_signal_fd = -1;
static _Atomic unsigned long harrec_signal_total = 0;

unsigned long harrec_shutdown_signals_received(void) { return harrec_signal_total; }

static void harrec_shutdown_handler(int signo) {
    (void)signo;
    int saved = errno;
    harrec_signal_total++;
    if (harrec_signal_fd >= 0) harrec_waker_fire(harrec_signal_fd);
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
#ifdef __linux__
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

void harrec_release_free_memory(void) {
#ifdef __linux__
    malloc_trim(0);
#endif
}

int harrec_name_this_thread(const char *name) {
#ifdef __linux__
    return pthread_setname_np(pthread_self(), name);
#else
    return pthread_setname_np(name);
#endif
}

int harrec_start_writeback(int fd, long long offset, long long length) {
#ifdef __linux__
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    return 0;
#endif
}
