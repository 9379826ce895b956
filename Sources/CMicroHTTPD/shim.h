#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <sys/epoll.h>

// The request line's target before libmicrohttpd decodes it. A `%00` in the path would be decoded to a NUL and
// the path handed to the access handler cut short there (`/v1/quotes/%00` would reach `/v1/quotes`); the value
// returned here becomes the request's first context, so the access handler can tell and refuse the request.
// The marker is an address no allocation can have; it is only compared, never dereferenced.
static inline void *cmhd_nul_in_path(void) { return (void *)(uintptr_t)1; }

static inline void *cmhd_uri_log(void *context, const char *uri, struct MHD_Connection *connection) {
  (void)context;
  (void)connection;
  for (const char *cursor = uri; *cursor != '\0' && *cursor != '?'; cursor++) {
    if (cursor[0] == '%' && cursor[1] == '0' && cursor[2] == '0') return cmhd_nul_in_path();
  }
  return NULL;
}

// Swift cannot call C variadic functions, and MHD_start_daemon takes its options as varargs.
// This shim passes the fixed set of options the server uses. Delete it if MHD gains a
// non-variadic start function (MHD 2 has one).
static inline struct MHD_Daemon *cmhd_start_daemon(unsigned int flags,
                                                  const struct sockaddr_in *bind_address,
                                                  MHD_AcceptPolicyCallback accept_policy,
                                                  void *accept_policy_context,
                                                  MHD_AccessHandlerCallback handler,
                                                  void *handler_context,
                                                  MHD_RequestCompletedCallback completed,
                                                  void *completed_context,
                                                  unsigned int thread_pool_size,
                                                  unsigned int connection_timeout_seconds,
                                                  size_t connection_memory_limit,
                                                  unsigned int connection_limit,
                                                  unsigned int listen_backlog,
                                                  MHD_NotifyConnectionCallback notify_connection,
                                                  void *notify_connection_context) {
  uint16_t port = ntohs(bind_address->sin_port);
  if (thread_pool_size > 1) {
    return MHD_start_daemon(flags, port, accept_policy, accept_policy_context, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, bind_address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, listen_backlog,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_context,
                            MHD_OPTION_URI_LOG_CALLBACK, cmhd_uri_log, NULL,
                            MHD_OPTION_END);
  }
  return MHD_start_daemon(flags, port, accept_policy, accept_policy_context, handler, handler_context,
                          MHD_OPTION_SOCK_ADDR, bind_address,
                          MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                          MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                          MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                          MHD_OPTION_LISTEN_BACKLOG_SIZE, listen_backlog,
                          MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_context,
                          MHD_OPTION_URI_LOG_CALLBACK, cmhd_uri_log, NULL,
                          MHD_OPTION_END);
}

// MHD_get_daemon_info is variadic. The bound port matters when the caller asked for port 0.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info == NULL ? 0 : info->port;
}

// MHD_get_connection_info is variadic. Writes the client's IP address as text into `buffer`
// (empty when unknown); used for per-address throttling and logs.
static inline void cmhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
  buffer[0] = '\0';
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (info == NULL || info->client_addr == NULL) return;
  const struct sockaddr *address = info->client_addr;
  if (address->sa_family == AF_INET && length >= 16) {
    // Dotted quad written by hand: inet_ntop formats with sprintf, a visible cost on every request.
    const unsigned char *octets = (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr;
    char *out = buffer;
    for (int index = 0; index < 4; index++) {
      unsigned value = octets[index];
      if (value >= 100) *out++ = (char)('0' + value / 100);
      if (value >= 10) *out++ = (char)('0' + value / 10 % 10);
      *out++ = (char)('0' + value % 10);
      *out++ = index < 3 ? '.' : '\0';
    }
  } else if (address->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, (socklen_t)length);
  }
}

// MHD_get_connection_info is variadic. The connection's socket, so a deadline can shut it down from another thread
// (MHD still closes it), or -1.
static inline int cmhd_connection_socket(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info == NULL ? -1 : info->connect_fd;
}

// MHD_get_connection_info is variadic. The per-socket context set in the connection notification.
static inline void *cmhd_socket_context(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info == NULL ? NULL : info->socket_context;
}

// MHD_get_connection_info is variadic. The peer's address, or NULL.
static inline const struct sockaddr *cmhd_client_sockaddr(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info == NULL ? NULL : info->client_addr;
}

struct cmhd_field_count {
  const char *name;
  int count;
};

static enum MHD_Result cmhd_count_field(void *context, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  (void)value;
  struct cmhd_field_count *counting = (struct cmhd_field_count *)context;
  if (key != NULL && strcasecmp(key, counting->name) == 0) counting->count++;
  return MHD_YES;
}

// How many header fields named `name` the request has (MHD_lookup_connection_value sees only the first): two
// Content-Length fields are a request-smuggling signal.
static inline int cmhd_header_count(struct MHD_Connection *connection, const char *name) {
  struct cmhd_field_count counting = {name, 0};
  MHD_get_connection_values(connection, MHD_HEADER_KIND, cmhd_count_field, &counting);
  return counting.count;
}

// The WebSocket reactor's epoll calls, kept in C: `struct epoll_event` is packed on x86_64, a layout Swift's
// import does not promise. `events` are EPOLLIN/EPOLLOUT/EPOLLRDHUP bits; the descriptor is the event's data.
static inline int cmhd_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int cmhd_epoll_control(int epoll, int operation, int socket, int writes) {
  struct epoll_event event = {0};
  event.events = EPOLLIN | EPOLLRDHUP | (writes ? EPOLLOUT : 0);
  event.data.fd = socket;
  return epoll_ctl(epoll, operation, socket, &event);
}

static inline int cmhd_epoll_add(int epoll, int socket) { return cmhd_epoll_control(epoll, EPOLL_CTL_ADD, socket, 0); }
static inline int cmhd_epoll_watch(int epoll, int socket, int writes) {
  return cmhd_epoll_control(epoll, EPOLL_CTL_MOD, socket, writes);
}
static inline int cmhd_epoll_remove(int epoll, int socket) { return epoll_ctl(epoll, EPOLL_CTL_DEL, socket, NULL); }

// Waits for at most `capacity` events; for each, its socket and whether it can be read (or hung up) and written.
static inline int cmhd_epoll_wait(int epoll, int *sockets, int *readable, int *writable, int capacity, int timeout) {
  struct epoll_event events[64];
  if (capacity > 64) capacity = 64;
  int ready = epoll_wait(epoll, events, capacity, timeout);
  for (int index = 0; index < ready; index++) {
    sockets[index] = events[index].data.fd;
    readable[index] = (events[index].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
    writable[index] = (events[index].events & EPOLLOUT) != 0;
  }
  return ready;
}

// MHD_upgrade_action is variadic. Gives an upgraded connection's socket back to MHD, which closes it.
static inline void cmhd_upgrade_close(struct MHD_UpgradeResponseHandle *handle) {
  MHD_upgrade_action(handle, MHD_UPGRADE_ACTION_CLOSE);
}

#endif
