/* Holds Realtime subscribers for bench/realtime.py at little CPU of its own: one thread, one epoll, no allocation
 * after the start. Opens one WebSocket per line of JOINS (a whole Phoenix vsn 1.0.0 phx_join message, sent once the
 * handshake is answered) from ADDRESSES loopback source addresses (127.0.0.2, .3, ...), then sends every joined
 * socket a Phoenix heartbeat once per HEARTBEAT seconds, spread evenly, answers pings, and counts what arrives.
 * Prints "joined J of N, failed F" once every socket is joined or refused, and the counts when it ends (SIGTERM,
 * SIGINT, or after SECONDS).
 * Usage: realtime-holder PORT PATH ADDRESSES JOINS HEARTBEAT SECONDS
 *   PATH: the handshake's target, e.g. /realtime/v1/websocket?apikey=...&vsn=1.0.0 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum phase { CONNECTING, HANDSHAKE, JOINING, JOINED, DEAD };

/* What the server sends a subscriber is small (replies, system messages); a longer frame is skipped. */
#define INPUT 2048

struct subscriber {
  int fd;
  enum phase phase;
  const char *join;
  size_t used;      /* bytes in input */
  uint64_t skip;    /* bytes of an oversized frame still to drop */
  unsigned ref;
  unsigned char input[INPUT];
};

static volatile sig_atomic_t stopping;
static void stop(int signal) { (void)signal; stopping = 1; }

static uint32_t seed = 2463534242u;
static uint32_t next_mask(void) { seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5; return seed; }

static double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

static unsigned long joined, failed, lost, heartbeats, replies, changes, pings;
static const char *path;
static int port;

/* The socket is gone: refused before its join was answered, or lost after. */
static void finish(struct subscriber *s) {
  if (s->phase == DEAD) return;
  if (s->phase == JOINED) lost++;
  else failed++;
  s->phase = DEAD;
  close(s->fd);
}

/* Sends one masked client frame; a socket whose buffer is full (never, at these rates) counts as lost. */
static void send_frame(struct subscriber *s, int opcode, const char *payload, size_t length) {
  unsigned char frame[8192];
  size_t header = 2;
  if (length > sizeof frame - 14) return;
  frame[0] = (unsigned char)(0x80 | opcode);
  if (length < 126) {
    frame[1] = (unsigned char)(0x80 | length);
  } else {
    frame[1] = 0x80 | 126;
    frame[2] = (unsigned char)(length >> 8);
    frame[3] = (unsigned char)length;
    header = 4;
  }
  uint32_t mask = next_mask();
  memcpy(frame + header, &mask, 4);
  const unsigned char *key = frame + header;
  for (size_t i = 0; i < length; i++) frame[header + 4 + i] = (unsigned char)payload[i] ^ key[i & 3];
  size_t total = header + 4 + length;
  if (send(s->fd, frame, total, MSG_NOSIGNAL) != (ssize_t)total) finish(s);
}

static void on_message(struct subscriber *s, const unsigned char *text, size_t length) {
  /* Enough of the JSON to tell a reply from a change; the join's reply is the first reply on a channel topic. */
  int reply = memmem(text, length, "\"event\":\"phx_reply\"", 19) != NULL;
  if (s->phase == JOINING && reply) {
    if (memmem(text, length, "\"status\":\"ok\"", 13) != NULL) {
      s->phase = JOINED;
      joined++;
    } else {
      if (failed < 3) fprintf(stderr, "join refused: %.*s\n", (int)(length > 300 ? 300 : length), text);
      finish(s);
    }
    return;
  }
  if (reply) replies++;
  else if (memmem(text, length, "\"event\":\"postgres_changes\"", 26) != NULL) changes++;
}

/* Frames in the input; returns 0 once the subscriber is gone. */
static int on_frames(struct subscriber *s) {
  size_t at = 0;
  while (s->used - at >= 2) {
    unsigned char *frame = s->input + at;
    int opcode = frame[0] & 0x0F;
    uint64_t length = frame[1] & 0x7F;
    size_t header = 2;
    if (length == 126) {
      if (s->used - at < 4) break;
      length = (uint64_t)frame[2] << 8 | frame[3];
      header = 4;
    } else if (length == 127) {
      if (s->used - at < 10) break;
      length = 0;
      for (int i = 2; i < 10; i++) length = length << 8 | frame[i];
      header = 10;
    }
    if (header + length > INPUT) {  /* too long to keep: dropped as it arrives */
      s->skip = header + length - (s->used - at);
      s->used = 0;
      return 1;
    }
    if (s->used - at < header + length) break;
    const unsigned char *payload = frame + header;
    if (opcode == 0x8) {
      if (s->phase == JOINED) fprintf(stderr, "closed by the server: %.*s\n", (int)length, payload);
      finish(s);
      return 0;
    } else if (opcode == 0x9) {
      pings++;
      send_frame(s, 0xA, (const char *)payload, length);
    } else if (opcode == 0x1) {
      on_message(s, payload, length);
      if (s->phase == DEAD) return 0;
    }
    at += header + length;
  }
  memmove(s->input, s->input + at, s->used - at);
  s->used -= at;
  return 1;
}

static void on_readable(struct subscriber *s) {
  for (int reads = 0; reads < 4; reads++) {
    ssize_t count;
    if (s->skip > 0) {
      unsigned char drop[INPUT];
      count = recv(s->fd, drop, s->skip < sizeof drop ? s->skip : sizeof drop, 0);
      if (count > 0) { s->skip -= (uint64_t)count; continue; }
    } else {
      count = recv(s->fd, s->input + s->used, INPUT - s->used, 0);
    }
    if (count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR)) { finish(s); return; }
    if (count < 0) return;
    if (s->skip > 0) continue;
    s->used += (size_t)count;
    if (s->phase == HANDSHAKE) {
      unsigned char *end = memmem(s->input, s->used, "\r\n\r\n", 4);
      if (end == NULL) continue;
      if (memcmp(s->input, "HTTP/1.1 101", 12) != 0) {
        if (failed < 3) fprintf(stderr, "handshake refused: %.*s\n", (int)(strchr((char *)s->input, '\r') - (char *)s->input), s->input);
        finish(s);
        return;
      }
      size_t head = (size_t)(end + 4 - s->input);
      memmove(s->input, s->input + head, s->used - head);
      s->used -= head;
      s->phase = JOINING;
      send_frame(s, 0x1, s->join, strlen(s->join));
    }
    if (!on_frames(s)) return;
  }
}

static void on_connected(struct subscriber *s) {
  int error = 0;
  socklen_t size = sizeof error;
  getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &size);
  if (error != 0) {
    if (failed < 3) fprintf(stderr, "connect: %s\n", strerror(error));
    finish(s);
    return;
  }
  char request[4096];
  int length = snprintf(request, sizeof request,
                        "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                        path);
  s->phase = HANDSHAKE;
  if (send(s->fd, request, (size_t)length, MSG_NOSIGNAL) != length) finish(s);
}

static int open_socket(struct subscriber *s, int index, int addresses, int epoll) {
  int number = 2 + index % addresses;
  struct sockaddr_in source = {.sin_family = AF_INET}, target = {.sin_family = AF_INET};
  source.sin_addr.s_addr = htonl((127u << 24) | (unsigned)number);
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  target.sin_port = htons((uint16_t)port);
  s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->fd < 0) { perror("socket"); return -1; }
  int one = 1;
  setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (bind(s->fd, (struct sockaddr *)&source, sizeof source) != 0) { perror("bind"); return -1; }
  s->phase = CONNECTING;
  if (connect(s->fd, (struct sockaddr *)&target, sizeof target) != 0 && errno != EINPROGRESS) {
    perror("connect");
    return -1;
  }
  struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = (uint32_t)index};
  return epoll_ctl(epoll, EPOLL_CTL_ADD, s->fd, &event);
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: %s PORT PATH ADDRESSES JOINS HEARTBEAT SECONDS\n", argv[0]);
    return 2;
  }
  port = atoi(argv[1]);
  path = argv[2];
  int addresses = atoi(argv[3]);
  double period = atof(argv[5]), seconds = atof(argv[6]);

  FILE *file = fopen(argv[4], "r");
  if (file == NULL) { perror(argv[4]); return 1; }
  size_t capacity = 1024, count = 0;
  char **joins = malloc(capacity * sizeof *joins);
  char *line = NULL;
  size_t size = 0;
  ssize_t length;
  while ((length = getline(&line, &size, file)) > 0) {
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) line[--length] = 0;
    if (length == 0) continue;
    if (count == capacity) joins = realloc(joins, (capacity *= 2) * sizeof *joins);
    joins[count++] = strdup(line);
  }
  fclose(file);
  struct subscriber *subscribers = calloc(count, sizeof *subscribers);
  if (subscribers == NULL) return 1;

  struct sigaction action = {.sa_handler = stop};
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGINT, &action, NULL);
  int epoll = epoll_create1(EPOLL_CLOEXEC);
  double started = now_seconds(), deadline = started + seconds;

  /* At most 200 handshakes and joins in flight at once. */
  size_t opened = 0;
  int reported = 0;
  double beats_from = 0;
  size_t beat = 0;
  struct epoll_event events[256];
  while (!stopping && now_seconds() < deadline) {
    while (opened < count && opened - (joined + failed) < 200) {
      subscribers[opened].join = joins[opened];
      if (open_socket(&subscribers[opened], (int)opened, addresses, epoll) != 0) return 1;
      opened++;
    }
    if (!reported && opened == count && joined + failed == count) {
      printf("joined %lu of %zu, failed %lu\n", joined, count, failed);
      fflush(stdout);
      reported = 1;
      beats_from = now_seconds();
    }
    int ready = epoll_wait(epoll, events, 256, 10);
    for (int i = 0; i < ready; i++) {
      struct subscriber *s = &subscribers[events[i].data.u32];
      if (s->phase == DEAD) continue;
      if (s->phase == CONNECTING) {
        if (!(events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) continue;
        on_connected(s);
        if (s->phase == DEAD) continue;
        struct epoll_event readable = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = events[i].data.u32};
        epoll_ctl(epoll, EPOLL_CTL_MOD, s->fd, &readable);
        continue;
      }
      on_readable(s);
    }
    if (reported && period > 0) {
      /* Socket k's heartbeat is due at k/count of each period: send every one that came due since the last turn. */
      double elapsed = now_seconds() - beats_from;
      size_t due = (size_t)(elapsed / period * (double)count);
      for (; beat < due; beat++) {
        struct subscriber *s = &subscribers[beat % count];
        if (s->phase != JOINED) continue;
        char message[96];
        int size = snprintf(message, sizeof message,
                            "{\"topic\":\"phoenix\",\"event\":\"heartbeat\",\"payload\":{},\"ref\":\"%u\"}", ++s->ref);
        send_frame(s, 0x1, message, (size_t)size);
        heartbeats++;
      }
    }
  }
  printf("heartbeats sent %lu, replies %lu, changes %lu, pings %lu, sockets lost %lu\n", heartbeats, replies,
         changes, pings, lost);
  return 0;
}
