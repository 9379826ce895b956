/* The HTTP floor of this stack: libmicrohttpd answering a fixed body with the same threading mode as
 * quote-server (internal epoll thread pool), queueing on the call after the headers as quote-server does.
 * Usage: http-floor PORT THREADS BODY */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *body;

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
  static int first_call_marker;
  (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
  if (*state == NULL) { *state = &first_call_marker; return MHD_YES; }  /* queue later: keep-alive */
  if (*upload_data_size != 0) { *upload_data_size = 0; return MHD_YES; }
  struct MHD_Response *response =
      MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(response, "Content-Type", "application/json; charset=utf-8");
  MHD_add_response_header(response, "X-Request-Id", "0123456789abcdef0123456789abcdef");
  enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
  MHD_destroy_response(response);
  return result;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s PORT THREADS BODY\n", argv[0]); return 2; }
  body = argv[3];
  unsigned int threads = (unsigned int)atoi(argv[2]);
  struct MHD_Daemon *daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)atoi(argv[1]), NULL, NULL,
      answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_END);
  if (daemon == NULL) { fprintf(stderr, "could not start\n"); return 1; }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int received;
  sigwait(&set, &received);
  MHD_stop_daemon(daemon);
  return 0;
}
