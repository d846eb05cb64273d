// Kept workers: evaluation workers that outlive one request (issue 15 item
// 5). A worker's set-up (CUDA context, captured launches on the device, the
// reference's outputs, the comparison baselines) costs seconds per kernel;
// a tuner asks for the same kernel batch after batch, so one worker per
// kernel stays alive between its requests, listening on a Unix socket, and
// keeps that set-up. A fault still ends it (the next request starts a fresh
// one), so a candidate is never judged in a context another one damaged.
//
// Plain C++ (no CUDA): the requests are the argument words of
// `cudal1-eval --worker verify|time ...`; the server side runs them with a
// handler the CUDA part gives (lib/Eval/Cuda/Worker.cpp).
#ifndef CUDAL1_EVAL_KEPTWORKERS_H
#define CUDAL1_EVAL_KEPTWORKERS_H

#include "cudal1/Eval/Process.h"

#include <functional>
#include <string>
#include <vector>

namespace cudal1 {

/// The socket of the kept worker for `kernelKey` and verification slot
/// `slot` under `dir` (a name derived from a hash: keys can be long).
/// Empty when the path would be too long for a Unix socket (108 bytes):
/// the caller then runs a worker process per request, as without `dir`.
std::string keptWorkerSocket(const std::string &dir, const std::string &kernelKey, int slot);

/// Runs one worker request on the kept worker listening at `socket`,
/// starting one (`argv[0] --worker serve --socket SOCKET ...`, in a session
/// of its own, not our child) when none listens. `argv` is the command line
/// a worker process would get (argv[0] the cudal1-eval executable, then
/// --worker MODE ...). The result reads as runProcess's for that process:
/// the exit code the request ended with, timedOut after `timeoutSeconds`
/// (the worker is killed), or `lost` when the worker ended without
/// answering (a watchdog or a fault ended it; its reports say why).
ProcessResult runKeptWorker(const std::string &socket, const std::vector<std::string> &argv,
                            double timeoutSeconds, double idleSeconds);

/// Asks every kept worker under `dir` to exit and waits (at most a few
/// seconds) until they have; sockets whose worker is gone are removed.
void stopKeptWorkers(const std::string &dir);

/// What the server does with one request: runs the worker for `words`
/// (the arguments after argv[0]) and returns its exit code; sets `keep`
/// false when the worker must not serve another request (a candidate was
/// not ok, a fault, a set-up error).
using KeptWorkerHandler = std::function<int(const std::vector<std::string> &words, bool &keep)>;

/// The server loop of a kept worker: listens at `socket`, answers requests
/// one at a time with `handle`, and exits (returning 0) when asked to, when
/// a request leaves it unusable (the exit code of that request), when no
/// request came for `idleSeconds`, or when its socket was removed (its
/// owner's work directory is gone).
int serveKeptWorker(const std::string &socket, double idleSeconds, const KeptWorkerHandler &handle);

} // namespace cudal1

#endif
