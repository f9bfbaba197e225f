#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/supervise.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Once the init is gone the kernel kills the rest of its pid namespace; a
 * pipe still open after this long belongs to something we cannot wait for
 * (an fd passed out of the container), so stop reading.  */
#define DRAIN_GRACE_MS 2000

/* How long the init has to reap a command killed at the timeout or a
 * cancel before everything is killed; it needs a few microseconds, but a
 * throttled cgroup may hold it back for a CFS period or two.  */
#define KILL_GRACE_MS 500

/* Reads what is there; returns 0 at EOF, 1 when more may come.  */
static int
drain (int fd, enum sr_stream stream, struct sr_capture *cap, const struct sr_supervise_io *io)
{
  char buf[65536];

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return 1;
      if (n <= 0)
        return 0;
      if (io->on_output)
        io->on_output (stream, buf, (size_t) n, io->userdata);
      sr_capture_add (cap, buf, (size_t) n);
    }
}

static int
arm_timer (uint64_t ms, sr_error_t *err)
{
  struct itimerspec its = { 0 };
  int fd;

  fd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (fd < 0)
    return sr_error_set (err, errno, "timerfd_create");
  its.it_value.tv_sec = ms / 1000;
  its.it_value.tv_nsec = (ms % 1000) * 1000000;
  if (timerfd_settime (fd, 0, &its, NULL) < 0)
    {
      close (fd);
      return sr_error_set (err, errno, "timerfd_settime");
    }
  return fd;
}

enum { WATCH_OUT, WATCH_ERR, WATCH_PID, WATCH_STATUS, WATCH_TIMER, WATCH_CANCEL, WATCH_MAX };

int
sr_supervise (const struct sr_supervise_io *io, struct sr_supervise_outcome *ret, sr_error_t *err)
{
  struct sr_capture out = { .cap = io->max_output }, errc = { .cap = io->max_output };
  _cleanup_close_ int timer = -1;
  struct pollfd pfd[WATCH_MAX];
  bool exited = false, reported = false, killed = false;
  uint64_t exited_at = 0, kill_all_at = 0;
  int r = -1;

  memset (ret, 0, sizeof *ret);
  if (io->timeout_ms > 0)
    {
      timer = arm_timer (io->timeout_ms, err);
      if (timer < 0)
        return -1;
    }
  for (int i = 0; i < WATCH_MAX; i++)
    pfd[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
  pfd[WATCH_OUT].fd = io->out_fd;
  pfd[WATCH_ERR].fd = io->err_fd;
  pfd[WATCH_PID].fd = io->pidfd;
  pfd[WATCH_STATUS].fd = io->status_fd;
  pfd[WATCH_TIMER].fd = timer;
  pfd[WATCH_CANCEL].fd = io->cancel_fd;

  while ((!exited && !reported && !ret->cmd_reported) || pfd[WATCH_OUT].fd >= 0
         || pfd[WATCH_ERR].fd >= 0)
    {
      int wait_ms = -1, n;

      if (exited)
        {
          uint64_t since = (sr_now_ns () - exited_at) / 1000000;

          if (since >= DRAIN_GRACE_MS)
            break;
          wait_ms = (int) (DRAIN_GRACE_MS - since);
        }
      else if (kill_all_at)
        {
          uint64_t now = sr_now_ns ();

          if (now >= kill_all_at)
            {
              io->kill (io->kill_ctx, true);
              kill_all_at = 0;
              continue;
            }
          wait_ms = (int) ((kill_all_at - now) / 1000000 + 1);
        }
      n = poll (pfd, WATCH_MAX, wait_ms);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_error_set (err, errno, "poll");
          goto out;
        }
      if (pfd[WATCH_OUT].revents && drain (pfd[WATCH_OUT].fd, SR_STREAM_STDOUT, &out, io) == 0)
        pfd[WATCH_OUT].fd = -1;
      if (pfd[WATCH_ERR].revents && drain (pfd[WATCH_ERR].fd, SR_STREAM_STDERR, &errc, io) == 0)
        pfd[WATCH_ERR].fd = -1;
      /* The command writes its report before it closes the pipes.  */
      if (io->cmd_end && !exited && !killed && pfd[WATCH_OUT].fd < 0 && pfd[WATCH_ERR].fd < 0
          && __atomic_load_n (&io->cmd_end->magic, __ATOMIC_ACQUIRE) == SR_CMD_END_MAGIC)
        {
          ret->cmd_reported = true;
          ret->cmd_status = io->cmd_end->status;
        }
      /* Data is the report; a hang-up alone, an init killed before it
       * could write one.  */
      if (pfd[WATCH_STATUS].revents)
        {
          reported = (pfd[WATCH_STATUS].revents & POLLIN) != 0;
          pfd[WATCH_STATUS].fd = -1;
        }
      if (pfd[WATCH_TIMER].revents && !killed)
        {
          ret->timed_out = true;
          killed = true;
          io->kill (io->kill_ctx, false);
          kill_all_at = sr_now_ns () + KILL_GRACE_MS * 1000000ull;
          pfd[WATCH_TIMER].fd = -1;
        }
      if (pfd[WATCH_CANCEL].revents && !killed)
        {
          ret->cancelled = true;
          killed = true;
          io->kill (io->kill_ctx, false);
          kill_all_at = sr_now_ns () + KILL_GRACE_MS * 1000000ull;
          pfd[WATCH_CANCEL].fd = -1;
        }
      if (pfd[WATCH_PID].revents)
        {
          memset (&ret->exit, 0, sizeof ret->exit);
          /* The raw waitid also reports the resources the container's
           * processes used (the init and every child it reaped).  */
          if (syscall (SYS_waitid, P_PIDFD, io->pidfd, &ret->exit, WEXITED, &ret->rusage) < 0)
            {
              sr_error_set (err, errno, "wait for the container");
              goto out;
            }
          exited = true;
          ret->init_reaped = true;
          exited_at = sr_now_ns ();
          pfd[WATCH_PID].fd = -1;
          pfd[WATCH_TIMER].fd = -1;
          pfd[WATCH_CANCEL].fd = -1;
          /* Whatever the init left behind dies with its pid namespace;
           * the kill makes sure of it for a cgroup that outlives it.  */
          io->kill (io->kill_ctx, true);
          killed = true;
          kill_all_at = 0;
        }
    }
  r = 0;
out:
  ret->out = sr_capture_finish (&out);
  ret->err = sr_capture_finish (&errc);
  return r;
}

