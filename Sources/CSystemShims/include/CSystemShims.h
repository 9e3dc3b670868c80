// Linux system calls and macros Swift cannot reach (epoll, eventfd, accept4, signals,
// fcntl, sync_file_range, thread names, malloc tuning), for the runtime, the journal and the CLI.
#ifndef CSYSTEMSHIMS_H
#define CSYSTEMSHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>

/// Sets O_NONBLOCK on a descriptor; fcntl is variadic and not callable from Swift.
int harrec_set_nonblocking(int fd);

/// The errno value of the calling thread.
int harrec_errno(void);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; glibc declares accept4 only under _GNU_SOURCE.
int harrec_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length);

/// Installs SIGINT and SIGTERM handlers that add 1 to the eventfd `fd` (async-signal-safe), and
/// ignores SIGPIPE. The event loop reads the count: 1 = graceful stop, 2 or more = stop now.
/// SIGINT, SIGTERM and SIGHUP each write 1 to `fd` (an eventfd) and count themselves.
int harrec_install_shutdown_signals(int fd);

/// How many of those signals arrived so far.
unsigned long harrec_shutdown_signals_received(void);

/// Makes malloc keep freed memory for reuse (large mmap threshold, no trimming) for a
/// short-lived batch job, so freed buffers are not faulted in again. mallopt's constants are
/// macros.
void harrec_retain_freed_memory(void);

/// Names a thread for ps/top and /proc (pthread_setname_np is a GNU extension: at most 15
/// characters). Returns 0 or an errno value.
int harrec_set_thread_name(unsigned long thread, const char *name);

/// Starts writeback of a file range without waiting (sync_file_range SYNC_FILE_RANGE_WRITE, a
/// GNU extension), so the final fsync of a large file has little left to wait for.
int harrec_start_writeback(int fd, long long offset, long long length);

#endif
