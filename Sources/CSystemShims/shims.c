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

// The bus-error exit: a message and temporary files, kept in static buffers the handler reads
// without allocating (it runs where the faulting thread was, in any state).
enum { harrec_bus_text_max = 1024, harrec_bus_slots = 8 };
static char harrec_bus_message[harrec_bus_text_max];
static char harrec_bus_paths[harrec_bus_slots][harrec_bus_text_max];
// 0 free, 2 being filled, 1 registered; taken with a compare-and-swap (writers on any thread).
static int harrec_bus_used[harrec_bus_slots];

static void harrec_bus_handler(int signal_number) {
    (void)signal_number;
    for (int i = 0; i < harrec_bus_slots; i++) {
        if (__atomic_load_n(&harrec_bus_used[i], __ATOMIC_ACQUIRE) == 1) unlink(harrec_bus_paths[i]);
    }
    size_t length = strlen(harrec_bus_message);
    if (length > 0) {
        ssize_t ignored = write(2, harrec_bus_message, length);
        (void)ignored;
    }
    _exit(1);
}

void harrec_on_bus_error(const char *message) {
    strncpy(harrec_bus_message, message, harrec_bus_text_max - 1);
    harrec_bus_message[harrec_bus_text_max - 1] = 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = harrec_bus_handler;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, NULL);
}

int harrec_bus_error_cleanup_add(const char *path) {
    for (int i = 0; i < harrec_bus_slots; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&harrec_bus_used[i], &expected, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            strncpy(harrec_bus_paths[i], path, harrec_bus_text_max - 1);
            harrec_bus_paths[i][harrec_bus_text_max - 1] = 0;
            __atomic_store_n(&harrec_bus_used[i], 1, __ATOMIC_RELEASE);
            return i;
        }
    }
    return -1;
}

void harrec_bus_error_cleanup_remove(int slot) {
    if (slot >= 0 && slot < harrec_bus_slots) __atomic_store_n(&harrec_bus_used[slot], 0, __ATOMIC_RELEASE);
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
