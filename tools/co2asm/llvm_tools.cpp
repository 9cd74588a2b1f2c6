// Tool discovery and subprocess execution (see llvm_tools.hpp). Output is drained from both pipes
// with poll() so a tool that fills stderr while we read stdout cannot deadlock.
#include "llvm_tools.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "co2asm_error.hpp"

extern char** environ;

namespace co2asm {
namespace {

bool is_executable(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_in_dir(const std::string& dir, const std::string& tool) {
    for (const std::string& name : {tool + "-22", tool}) {
        const std::string path = dir + "/" + name;
        if (is_executable(path)) return path;
    }
    return std::nullopt;
}

std::optional<std::string> find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (path == nullptr) return std::nullopt;
    std::string all(path);
    size_t start = 0;
    while (start <= all.size()) {
        const size_t end = std::min(all.find(':', start), all.size());
        const std::string dir = end > start ? all.substr(start, end - start) : ".";
        if (is_executable(dir + "/" + name)) return dir + "/" + name;
        start = end + 1;
    }
    return std::nullopt;
}

constexpr const char* kDebianLlvmDir = "/usr/lib/llvm-22/bin";

}  // namespace

LlvmTools find_llvm_tools(const std::optional<std::string>& llvm_bin) {
    LlvmTools tools;
    auto locate = [&](const std::string& tool) -> std::string {
        if (llvm_bin) return find_in_dir(*llvm_bin, tool).value_or("");
        if (auto p = find_on_path(tool + "-22")) return *p;
        return find_in_dir(kDebianLlvmDir, tool).value_or("");
    };
    tools.searched = llvm_bin ? *llvm_bin : std::string("PATH (as <tool>-22) and ") + kDebianLlvmDir;
    tools.objdump = locate("llvm-objdump");
    tools.readelf = locate("llvm-readelf");
    tools.clang = locate("clang");
    for (const auto& [path, name] :
         {std::pair{tools.objdump, "llvm-objdump"}, {tools.readelf, "llvm-readelf"}}) {
        if (path.empty()) {
            throw Co2asmError(fmt::format("{} not found in {}", name, tools.searched),
                              llvm_bin ? "pass --llvm-bin with a directory that holds LLVM 22's tools"
                                       : "install llvm-22 (apt-get install llvm-22 clang-22 lld-22) or "
                                         "pass --llvm-bin DIR");
        }
    }
    return tools;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
    int out_pipe[2];
    int err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        throw Co2asmError(fmt::format("cannot create a pipe: {}", std::strerror(errno)),
                          "free file descriptors");
    }
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
        ::close(out_pipe[0]);
        ::close(out_pipe[1]);
        throw Co2asmError(fmt::format("cannot create a pipe: {}", std::strerror(errno)),
                          "free file descriptors");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (rc != 0) {
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        throw Co2asmError(fmt::format("cannot run {}: {}", argv[0], std::strerror(rc)),
                          "check the LLVM installation or pass --llvm-bin DIR");
    }
    ProcessResult result;
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto& f : fds) {
        if (f.fd >= 0) ::close(f.fd);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

std::string run_tool(const std::vector<std::string>& argv, const std::string& purpose) {
    ProcessResult r = run_process(argv);
    if (r.exit_code != 0) {
        std::string first = r.err.substr(0, r.err.find('\n'));
        if (first.empty()) first = fmt::format("exit status {}", r.exit_code);
        throw Co2asmError(fmt::format("{} failed while {}: {}", argv[0], purpose, first),
                          "check that the file is a valid code object and the tool is LLVM 22");
    }
    return std::move(r.out);
}

std::string shell_quote(const std::string& arg) {
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                                           "vwxyz0123456789_./:=+-,@%") == std::string::npos;
    if (plain) return arg;
    std::string q = "'";
    for (char c : arg) {
        if (c == '\'')
            q += "'\\''";
        else
            q += c;
    }
    return q + "'";
}

}  // namespace co2asm
