// Atomic output and scratch directories (see file_io.hpp).
#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "co2asm_error.hpp"

namespace co2asm {

namespace {

Co2asmError write_error(const std::string& path, int err) {
    return Co2asmError(fmt::format("cannot write {}: {}", path, std::strerror(err)),
                       "pass -o with a path in an existing, writable directory");
}

// Creates `path` + ".co2asm-XXXXXX" (a sibling, so rename() stays within one file system).
int make_sibling_temp(const std::string& path, std::vector<char>* tmp) {
    if (std::filesystem::is_directory(path)) throw write_error(path, EISDIR);
    tmp->assign(path.begin(), path.end());
    const std::string suffix = ".co2asm-XXXXXX";
    tmp->insert(tmp->end(), suffix.begin(), suffix.end());
    tmp->push_back('\0');
    const int fd = ::mkstemp(tmp->data());
    if (fd < 0) throw write_error(path, errno);
    return fd;
}

}  // namespace

void check_writable(const std::string& path) {
    std::vector<char> tmp;
    const int fd = make_sibling_temp(path, &tmp);
    ::close(fd);
    ::unlink(tmp.data());
}

void write_file_atomically(const std::string& path, const std::string& content) {
    auto fail = [&](int err) { return write_error(path, err); };
    std::vector<char> tmp;
    const int fd = make_sibling_temp(path, &tmp);
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            ::unlink(tmp.data());
            throw fail(err);
        }
        done += static_cast<size_t>(n);
    }
    // mkstemp makes the file 0600; give it the permissions a normal create would.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    if (::close(fd) != 0 || std::rename(tmp.data(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.data());
        throw fail(err);
    }
}

ScratchDir::ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/co2asm-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
        throw Co2asmError(
            fmt::format("cannot create a scratch directory {}: {}", pattern, std::strerror(errno)),
            "set TMPDIR to a writable directory, or pass --no-verify");
    }
    path_ = buf.data();
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

}  // namespace co2asm
