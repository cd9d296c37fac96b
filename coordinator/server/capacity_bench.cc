// The capacity test of issue 25 (item 7): the coordinator's WorkerService under N simulated evaluators
// on loopback, one channel (and TCP connection) each, for each N of --evaluators.
//
// The coordinator runs in a child process (this program again, with --serve; load_coordinator.h), so its
// CPU time and memory are its own, not the simulated workers'; the workers run here on gRPC's callback
// client API (simulated_evaluators.h). For each N:
//   1. steady load, production lease (60 s) and heartbeat (10 s), the queue filled with 2N jobs before
//      the workers start (--cold_start=1: after): --warmup seconds, then --seconds
//      measured: accepted results a second (the queue's done count), pull latency from the job's
//      availability, report and heartbeat latency, the coordinator's CPU and RSS;
//   2. idle: the feed paused until every worker sits in a long poll (N held calls on the server), then
//      --trickle jobs a second for --idle_seconds: the latency of waking a long poll, heartbeats then,
//      and the server's thread count (its synchronous API holds a thread per call);
//   3. kill: a fresh coordinator with --kill_lease_ms leases (heartbeat a quarter of that); after 3 s,
//      --kill_fraction of the workers are killed mid-job (no heartbeat, report or pull again): the time
//      from each lease's end to the job's next grant.
// Evaluation times are lognormal (--median_ms, --sigma): the offered load is about
// N / (median * exp(sigma^2 / 2)) results a second, 1,800/s for 2048 workers at the defaults (1 s, 0.5).
//
// --journal_dir=DIR: "every result durable before it is acknowledged": the coordinator journals every
// job, grant and result (job_journal.h) as `sparseditto coordinator` does; without it, in memory.
// --max_batch=K: the coordinator submits up to K jobs in one SubmitAll (one journal write); 1: one by one.
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "coordinator/server/load_coordinator.h"
#include "coordinator/server/load_measures.h"
#include "coordinator/server/simulated_evaluators.h"
#include "fmt/format.h"

extern char** environ;

namespace sparseditto {
namespace {

using Flags = std::map<std::string, std::string>;

double Flag(const Flags& flags, const std::string& name, double fallback) {
  auto it = flags.find(name);
  double value = fallback;
  if (it != flags.end() && !absl::SimpleAtod(it->second, &value)) {
    std::cerr << "--" << name << ": not a number: " << it->second << "\n";
    std::exit(2);
  }
  return value;
}

// --journal_dir=DIR: each coordinator journals its jobs in DIR/<its pid> (the production path: a job,
// a grant and a result each a synced RocksDB write); absent: in memory.
std::string JournalDir(const Flags& flags) {
  auto it = flags.find("journal_dir");
  return it == flags.end() ? "" : it->second;
}

// --max_batch=K: the coordinator's submitter submits up to K jobs at once (one SubmitAll, so one
// journal sync for the batch); 1: one Submit and one sync per job. Default 256.
int MaxBatch(const Flags& flags) { return static_cast<int>(Flag(flags, "max_batch", 256)); }

void Sleep(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

// ---- The child: a LoadCoordinator driven by one-line commands on stdin, answering on stdout.
int Serve(const Flags& flags) {
  LoadCoordinatorOptions options;
  options.work.lease = absl::Milliseconds(Flag(flags, "lease_ms", 60000));
  options.work.heartbeat_interval = absl::Milliseconds(Flag(flags, "heartbeat_ms", 10000));
  options.outstanding = static_cast<int>(Flag(flags, "outstanding", 128));
  options.max_batch = static_cast<int>(Flag(flags, "max_batch", 256));
  if (auto dir = flags.find("journal_dir"); dir != flags.end()) {
    options.journal_dir = fmt::format("{}/{}", dir->second, getpid());  // a fresh journal per coordinator
  }
  LoadCoordinator coordinator(options);
  if (!coordinator.ok()) return 1;
  std::cout << "address " << coordinator.address() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream command(line);
    std::string verb;
    double rate = 0;
    command >> verb >> rate;
    if (verb == "feed") coordinator.SetFeed(LoadCoordinator::Feed::kFeeding);
    if (verb == "pause") coordinator.SetFeed(LoadCoordinator::Feed::kPaused);
    if (verb == "trickle") coordinator.SetFeed(LoadCoordinator::Feed::kTrickle, rate);
    if (verb == "window") coordinator.ResetWindow();
    if (verb == "quit") break;
    const LoadCoordinatorStats s = coordinator.Stats();
    std::cout << fmt::format("stats {} {} {} {} {} {} {} {:.6f} {} {} {} {} {}", s.submitted, s.results,
                             s.without_result, s.queue.done, s.queue.pending, s.queue.leased, s.queue.lost,
                             s.cpu_seconds, s.rss_kib, s.peak_rss_kib, s.threads, s.peak_threads, s.min_pending)
              << std::endl;
  }
  return 0;
}

// ---- The parent's handle on a child coordinator.
class ChildCoordinator {
 public:
  ChildCoordinator(const std::string& self, int lease_ms, int heartbeat_ms, int outstanding,
                   const std::string& journal_dir, int max_batch) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) std::exit(3);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_addclose(&actions, to_child[1]);
    posix_spawn_file_actions_addclose(&actions, from_child[0]);
    std::vector<std::string> args = {self, "--serve", fmt::format("--lease_ms={}", lease_ms),
                                     fmt::format("--heartbeat_ms={}", heartbeat_ms),
                                     fmt::format("--outstanding={}", outstanding),
                                     fmt::format("--max_batch={}", max_batch)};
    if (!journal_dir.empty()) args.push_back(fmt::format("--journal_dir={}", journal_dir));
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, self.c_str(), &actions, nullptr, argv.data(), environ) != 0) std::exit(3);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
    const std::string first = ReadLine();
    address_ = first.substr(first.find(' ') + 1);
    port_ = std::stoi(address_.substr(address_.rfind(':') + 1));
  }
  ~ChildCoordinator() {
    std::fputs("quit\n", to_);
    std::fflush(to_);
    std::fclose(to_);
    int status = 0;
    waitpid(pid_, &status, 0);
    std::fclose(from_);
  }
  // Sends `command`; the child's stats after it.
  LoadCoordinatorStats Command(const std::string& command) {
    std::fputs((command + "\n").c_str(), to_);
    std::fflush(to_);
    std::istringstream in(ReadLine());
    std::string word;
    LoadCoordinatorStats s;
    in >> word >> s.submitted >> s.results >> s.without_result >> s.queue.done >> s.queue.pending >> s.queue.leased >>
        s.queue.lost >> s.cpu_seconds >> s.rss_kib >> s.peak_rss_kib >> s.threads >> s.peak_threads >> s.min_pending;
    return s;
  }
  const std::string& address() const { return address_; }
  int port() const { return port_; }

 private:
  std::string ReadLine() {
    char buffer[512];
    if (std::fgets(buffer, sizeof buffer, from_) == nullptr) {
      std::cerr << "the coordinator child ended\n";
      std::exit(4);
    }
    std::string line(buffer);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    return line;
  }
  pid_t pid_ = 0;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string address_;
  int port_ = 0;
};

struct Row {
  int n = 0;
  double accepted_per_s = 0, cpu_percent = 0, peak_rss_mib = 0, client_cpu_percent = 0;
  SimulatedEvaluatorsStats load, idle, kill;
  int64_t connections = 0, killed = 0, min_pending = 0, server_threads_load = 0, server_threads_idle = 0;
  int64_t client_threads = 0;
  double register_s = 0;
};

SimulatedEvaluatorsOptions SimOptions(const Flags& flags, const ChildCoordinator& child, int n) {
  SimulatedEvaluatorsOptions o;
  o.address = child.address();
  o.token = kLoadEvaluatorToken;
  o.count = n;
  o.median_evaluation = absl::Milliseconds(Flag(flags, "median_ms", 1000));
  o.sigma = Flag(flags, "sigma", 0.5);
  o.seed = static_cast<uint64_t>(n);
  return o;
}

Row RunOne(const Flags& flags, const std::string& self, int n) {
  Row row;
  row.n = n;
  {  // 1 and 2: steady load, then idle long polls
    ChildCoordinator child(self, 60000, 10000, 2 * n, JournalDir(flags), MaxBatch(flags));
    SimulatedEvaluators sims(SimOptions(flags, child, n));
    // The queue filled before the workers start (--cold_start: after), so that N first pulls do not all
    // wait on an empty queue at once.
    const bool cold = Flag(flags, "cold_start", 0) != 0;
    if (!cold) {
      child.Command("feed");
      for (int i = 0; i < 100 && child.Command("stats").queue.pending < 2 * n; ++i) Sleep(0.05);
    }
    const absl::Time registering = absl::Now();
    if (absl::Status s = sims.Start(); !s.ok()) std::cerr << "N=" << n << ": register: " << s << "\n";
    row.register_s = absl::ToDoubleSeconds(absl::Now() - registering);
    if (cold) child.Command("feed");
    Sleep(Flag(flags, "warmup", 5));
    row.connections = ConnectionsTo(child.port());
    const LoadCoordinatorStats before = child.Command("window");
    sims.StartWindow();
    const double client_cpu = ProcessCpuSeconds();
    const absl::Time start = absl::Now();
    Sleep(Flag(flags, "seconds", 20));
    const LoadCoordinatorStats after = child.Command("stats");
    const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
    row.load = sims.Stats();
    row.client_cpu_percent = 100 * (ProcessCpuSeconds() - client_cpu) / elapsed;
    row.client_threads = ProcStatusField("Threads");
    row.accepted_per_s = static_cast<double>(after.queue.done - before.queue.done) / elapsed;
    row.cpu_percent = 100 * (after.cpu_seconds - before.cpu_seconds) / elapsed;
    row.min_pending = after.min_pending;
    row.server_threads_load = after.peak_threads;
    if (const double idle_s = Flag(flags, "idle_seconds", 5); idle_s > 0) {
      LoadCoordinatorStats s = child.Command("pause");
      for (int i = 0; i < 200 && s.queue.leased + s.queue.pending > 0; ++i) {
        Sleep(0.05);
        s = child.Command("stats");
      }
      Sleep(0.5);  // the last reports' pulls reach the server
      sims.StartWindow();
      child.Command(fmt::format("trickle {}", Flag(flags, "trickle", 20)));
      Sleep(idle_s);
      const LoadCoordinatorStats idle = child.Command("pause");
      row.idle = sims.Stats();
      row.server_threads_idle = idle.threads;
    }
    row.peak_rss_mib = static_cast<double>(child.Command("stats").peak_rss_kib) / 1024;
    sims.Stop();
  }
  if (const double fraction = Flag(flags, "kill_fraction", 0.05); fraction > 0) {  // 3: kill
    const int lease_ms = static_cast<int>(Flag(flags, "kill_lease_ms", 2000));
    ChildCoordinator child(self, lease_ms, lease_ms / 4, 2 * n, JournalDir(flags), MaxBatch(flags));
    SimulatedEvaluators sims(SimOptions(flags, child, n));
    child.Command("feed");
    for (int i = 0; i < 100 && child.Command("stats").queue.pending < 2 * n; ++i) Sleep(0.05);
    (void)sims.Start();
    Sleep(3);
    row.killed = sims.Kill(fraction);
    for (int i = 0; i < 200 && sims.Stats().relet_waiting > 0; ++i) Sleep(0.05 + lease_ms / 1000.0 / 20);
    row.kill = sims.Stats();
    sims.Stop();
  }
  return row;
}

void Print(const std::vector<Row>& rows) {
  std::cout << "\n| N | accepted/s | pull p50/p99 ms | report p50/p99 ms | heartbeat p99 ms | re-lease p50/p99 ms | "
               "server CPU % | server RSS MiB |\n|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    std::cout << fmt::format("| {} | {:.0f} | {:.2f} / {:.2f} | {:.2f} / {:.2f} | {:.2f} | {:.1f} / {:.1f} | {:.0f} | {:.0f} |\n",
                             r.n, r.accepted_per_s, r.load.pull.p50_ms, r.load.pull.p99_ms, r.load.report.p50_ms,
                             r.load.report.p99_ms, r.load.heartbeat.p99_ms, r.kill.relet.p50_ms, r.kill.relet.p99_ms,
                             r.cpu_percent, r.peak_rss_mib);
  }
  std::cout << "\n| N | conns | register s | pulls (waited) | reports | errors | min pending | server threads load/idle "
               "| idle wake p50/p99 ms | idle heartbeat p99 ms | killed (re-leased, waiting, reported first) | kill phase stale, stopped | client CPU % | client threads |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    std::string errors;
    for (const auto& [what, count] : r.load.errors) errors += fmt::format("{}:{} ", what, count);
    for (const auto& [what, count] : r.idle.errors) errors += fmt::format("idle {}:{} ", what, count);
    std::cout << fmt::format("| {} | {} | {:.1f} | {} ({}) | {} | {}{} | {} | {} / {} | {:.1f} / {:.1f} | {:.2f} | {} ({}, {}, {}) | {}, {} | {:.0f} | {} |\n",
                             r.n, r.connections, r.register_s, r.load.grants, r.load.waited_grants, r.load.report.count,
                             r.load.rpc_errors + r.idle.rpc_errors, errors.empty() ? "" : " ", r.min_pending,
                             r.server_threads_load, r.server_threads_idle, r.idle.pull.p50_ms, r.idle.pull.p99_ms,
                             r.idle.heartbeat.p99_ms, r.killed, r.kill.relet.count, r.kill.relet_waiting, r.kill.killed_after_report, r.kill.stale, r.kill.stopped,
                             r.client_cpu_percent, r.client_threads);
  }
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) {
  using namespace sparseditto;
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) continue;
    const size_t eq = arg.find('=');
    flags[arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
        eq == std::string::npos ? "1" : arg.substr(eq + 1);
  }
  // N connections and their sockets on each side: the soft descriptor limit up to the hard one.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  if (flags.contains("serve")) return Serve(flags);
  signal(SIGPIPE, SIG_IGN);
  const std::string evaluators = flags.contains("evaluators") ? flags["evaluators"] : "64,512,2048";
  std::vector<Row> rows;
  for (absl::string_view item : absl::StrSplit(evaluators, ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(item, &n) || n < 1) {
      std::cerr << "--evaluators: not a list of counts: " << evaluators << "\n";
      return 2;
    }
    std::cerr << "N=" << n << " ...\n";
    rows.push_back(RunOne(flags, "/proc/self/exe", n));
    Print({rows.back()});
  }
  std::cout << "\nall:\n";
  Print(rows);
  return 0;
}
