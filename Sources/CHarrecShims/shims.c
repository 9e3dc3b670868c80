#define _GNU_SOURCE
#include "CHarrecShims.h"
#include <errno.h>
#include <string.h>

int harrec_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

int harrec_deflateInit2(z_streamp strm, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

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

static void harrec_shutdown_handler(int signo) {
    (void)signo;
    int saved = errno;
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
    signal(SIGPIPE, SIG_IGN);
    return 0;
}
