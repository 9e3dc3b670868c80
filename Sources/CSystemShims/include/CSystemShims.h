// The platform file: the system calls that differ between Linux and Darwin (epoll vs none,
// eventfd vs a pipe, accept4 and SOCK_NONBLOCK vs fcntl, MSG_NOSIGNAL vs SO_NOSIGPIPE, thread
// names, writeback, malloc tuning), and the macros Swift cannot reach, for the runtime, the
// journal and the CLI. Swift code calls these instead of the platform's own where they differ.
// Linux is built and tested in CI; the Darwin branches follow Apple's documented APIs and are not
// compiled here.
#ifndef CSYSTEMSHIMS_H
#define CSYSTEMSHIMS_H

#include <stddef.h>
#include <stdint.h>
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <pthread.h>

/// Sets O_NONBLOCK on a descriptor; fcntl is variadic and not callable from Swift.
int harrec_set_nonblocking(int fd);

/// The errno value of the calling thread.
int harrec_errno(void);

/// SOCK_STREAM as an int (an enum on Linux, a macro on Darwin).
int harrec_sock_stream(void);

/// A TCP socket of `family` that does not block, closes on exec and never raises SIGPIPE
/// (Linux: SOCK_NONBLOCK | SOCK_CLOEXEC, sends with MSG_NOSIGNAL; Darwin: fcntl and SO_NOSIGPIPE).
int harrec_stream_socket(int family);

/// accept with the same three properties (Linux: accept4).
int harrec_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length);

/// The flags for send/sendmsg on those sockets: MSG_NOSIGNAL where it exists, else 0 (the
/// socket's SO_NOSIGPIPE does it).
int harrec_send_flags(void);

/// A waker that another thread or a signal handler fires to interrupt a poll: one eventfd on
/// Linux (`fds[0] == fds[1]`), a non-blocking pipe elsewhere (`fds[0]` to watch, `fds[1]` to
/// fire). Returns 0, or -1 with errno set.
int harrec_waker_open(int fds[2]);

/// Fires a waker by its writing descriptor (async-signal-safe).
void harrec_waker_fire(int fd);

/// Clears a waker by its watched descriptor; returns how often it fired since the last call.
unsigned long harrec_waker_take(int fd);

/// Installs SIGINT, SIGTERM and SIGHUP handlers that count themselves and fire the waker whose
/// writing descriptor is `fd` (-1: count only), and ignores SIGPIPE. 1 signal = graceful stop,
/// 2 or more = stop now.
int harrec_install_shutdown_signals(int fd);

/// Makes a bus error (SIGBUS: a mapped file truncated under its reader) end the process with
/// `message` on stderr and exit status 1, after removing the temporary files registered with
/// `harrec_bus_error_cleanup_add`, instead of a crash report. `message` is copied (at most 1 KiB);
/// call again to change it (the file being read). Not for Darwin's other SIGBUS causes.
void harrec_on_bus_error(const char *message);

/// Registers a temporary file the bus-error exit removes (at most 8 at once); returns its slot,
/// or -1 when all are taken. `path` is copied (at most 1 KiB).
int harrec_bus_error_cleanup_add(const char *path);

/// Unregisters a slot `harrec_bus_error_cleanup_add` returned (the file was renamed or removed).
void harrec_bus_error_cleanup_remove(int slot);

/// How many of those signals arrived so far.
unsigned long harrec_shutdown_signals_received(void);

/// Makes malloc keep freed memory for reuse (large mmap threshold, no trimming) for a
/// short-lived batch job, so freed buffers are not faulted in again. mallopt's constants are
/// macros. (Darwin: nothing.)
void harrec_retain_freed_memory(void);

/// Gives the memory malloc holds free back to the system (malloc_trim): after a load whose
/// intermediate trees were freed, a long-running process keeps only what it uses. (Darwin:
/// nothing.)
void harrec_release_free_memory(void);

/// Names the calling thread for ps/top and /proc (at most 15 characters on Linux). Returns 0 or
/// an errno value. (Darwin names only the calling thread, so it is called from the thread.)
int harrec_name_this_thread(const char *name);

/// Starts writeback of a file range without waiting (sync_file_range SYNC_FILE_RANGE_WRITE, a
/// GNU extension), so the final fsync of a large file has little left to wait for. (Darwin:
/// nothing; the fsync does it all.)
int harrec_start_writeback(int fd, long long offset, long long length);

#endif
