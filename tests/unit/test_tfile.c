// link: build/interpose/record/cp_tfile.o build/interpose/record/cp_ownfd.o
/*
 * test_tfile.c - interpose/record/cp_tfile.c: ending a trace file at a
 * place a reader can stop at, as a full file system makes the writer do.
 * A zstd stream (checksummed frames, flushes) is written through cp_tf,
 * then garbage after the stop point (a failed write's part), then
 * cp_tf_stop() there with a few record bytes, then cp_tf_end(): zstd must
 * decode the file to exactly the content before the point, the stop bytes
 * and the end bytes, checksums verified, with the skippable padding
 * skipped.  Stops inside a frame (a raw last block and a checksum of the
 * whole frame: our XXH64) and between frames (a frame of its own).  A
 * SIGKILL between stop and end leaves a file that decodes too.
 * The descriptor's guard: the program closes it, or puts another file at
 * its number, between writes; nothing reaches the other file, the trace is
 * opened again by its name and decodes whole; a trace whose name now
 * belongs to another file is given up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "cp_tfile.h"
#include "cp_unit.h"

static size_t decode_file(const char *path, uint8_t *out, size_t cap)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open");
    static uint8_t in[1 << 22];
    ssize_t n = read(fd, in, sizeof in);
    close(fd);
    CHECK(n > 16, "read");
    size_t r = ZSTD_decompress(out, cap, in + 16, (size_t)n - 16);
    CHECK(!ZSTD_isError(r), "%s", ZSTD_getErrorName(r));
    return r;
}

static void one(int in_frame, size_t before, int end_too)
{
    char path[] = "/tmp/cp-tfile-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    CHECK(write(fd, "CUPROBE\0\1\0\0\0\0\0\0\0", 16) == 16, "prefix");
    cp_tfile t;
    cp_tf_open(&t, fd, 16, path);
    CHECK(t.fd > fd, "the descriptor was not moved up: %d", t.fd);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    uint8_t *content = malloc(before + 1);
    for (size_t i = 0; i < before; i++)
        content[i] = (uint8_t)(i * 7 + (i >> 9));   /* compressible, not trivial */
    static uint8_t zout[1 << 21];
    /* Two flushed halves; a frame end after them when stopping between frames. */
    size_t half = before / 2;
    for (int k = 0; k < 2; k++) {
        ZSTD_inBuffer in = {content + k * half, k ? before - half : half, 0};
        ZSTD_EndDirective mode = k && !in_frame ? ZSTD_e_end : ZSTD_e_flush;
        size_t r;
        do {
            ZSTD_outBuffer out = {zout, sizeof zout, 0};
            r = ZSTD_compressStream2(c, &out, &in, mode);
            CHECK(!ZSTD_isError(r), "compress");
            CHECK(cp_tf_write(&t, zout, out.pos) == 0, "write");
        } while (r);
        cp_tf_content(&t, content + k * half, k ? before - half : half);
        CHECK(cp_tf_point(&t, mode == ZSTD_e_end, 0, 1, 0) == 0, "point");
    }
    /* More compressed data whose write "failed" half way. */
    CHECK(write(t.fd, "\x11\x22\x33garbage of a failed write", 28) == 28, "garbage");
    const cp_tpoint *pt = cp_tf_stop_point(&t, 0);
    CHECK(pt && pt->in_frame == in_frame, "stop point");
    static const uint8_t stop[] = "NOSPACE-record-bytes";
    static const uint8_t end[] = "END-record";
    CHECK(cp_tf_stop(&t, pt, stop, sizeof stop) == 0, "stop");
    if (end_too)
        CHECK(cp_tf_end(&t, end, sizeof end) == 0, "end");
    cp_tf_close(&t);
    CHECK(t.fd == -1, "not closed");
    static uint8_t dec[1 << 21];
    size_t n = decode_file(path, dec, sizeof dec);
    size_t want = before + sizeof stop + (end_too ? sizeof end : 0);
    CHECK(n == want, "decoded %zu bytes, want %zu (in_frame %d)", n, want, in_frame);
    CHECK(memcmp(dec, content, before) == 0, "content");
    CHECK(memcmp(dec + before, stop, sizeof stop) == 0, "stop bytes");
    if (end_too)
        CHECK(memcmp(dec + before + sizeof stop, end, sizeof end) == 0, "end bytes");
    unlink(path);
    free(content);
    ZSTD_freeCCtx(c);
}

/* Compress content[0..n) as one flushed frame through t. */
static void put(cp_tfile *t, ZSTD_CCtx *c, const uint8_t *content, size_t n)
{
    static uint8_t zout[1 << 18];
    ZSTD_inBuffer in = {content, n, 0};
    size_t r;
    do {
        ZSTD_outBuffer out = {zout, sizeof zout, 0};
        r = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
        CHECK(!ZSTD_isError(r), "compress");
        CHECK(cp_tf_write(t, zout, out.pos) == 0, "write");
    } while (r);
}

/* how 0: the program closes the descriptor; 1: it puts a file of its own
 * at the number (dup2); 2: it closes it and another file takes the
 * trace's name (the trace cannot be opened again). */
static void guard(int how)
{
    char path[] = "/tmp/cp-tfile-XXXXXX", theirs[] = "/tmp/cp-tfile-theirs-XXXXXX";
    int fd = mkstemp(path), other = mkstemp(theirs);
    CHECK(fd >= 0 && other >= 0, "mkstemp");
    CHECK(write(fd, "CUPROBE\0\1\0\0\0\0\0\0\0", 16) == 16, "prefix");
    cp_tfile t;
    cp_tf_open(&t, fd, 16, path);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    static uint8_t content[3000];
    for (size_t i = 0; i < sizeof content; i++)
        content[i] = (uint8_t)(i * 13);
    put(&t, c, content, 1000);
    int was = t.fd, hw, old_fd, new_fd;
    CHECK(!cp_tf_fd_event(&t, &hw, &old_fd, &new_fd), "an event before anything happened");
    if (how == 1) {
        CHECK(dup2(other, was) == was, "dup2");
    } else {
        close(was);
        if (how == 2) {
            CHECK(rename(theirs, path) == 0, "rename");
            strcpy(theirs, path);
        }
    }
    if (how == 2) {
        uint8_t z[64];
        CHECK(cp_tf_write(&t, z, sizeof z) == -EBADF, "wrote to a file that is not the trace");
        CHECK(t.fd_gone == CP_OWNFD_CLOSED && t.fd_gone_err == ESTALE && t.fd == -1,
              "gone %d err %d fd %d", t.fd_gone, t.fd_gone_err, t.fd);
        cp_tf_close(&t);
    } else {
        put(&t, c, content + 1000, 2000);
        CHECK(cp_tf_fd_event(&t, &hw, &old_fd, &new_fd), "no event");
        CHECK(hw == (how == 1 ? CP_OWNFD_REPLACED : CP_OWNFD_CLOSED) && old_fd == was &&
              new_fd == t.fd, "event %d %d %d", hw, old_fd, new_fd);
        CHECK(!cp_tf_fd_event(&t, &hw, &old_fd, &new_fd), "the event twice");
        cp_tf_close(&t);
        static uint8_t dec[4096];
        CHECK(decode_file(path, dec, sizeof dec) == sizeof content, "decoded length");
        CHECK(memcmp(dec, content, sizeof content) == 0, "content");
    }
    /* Their file: untouched, and still open at the number in the dup2 case. */
    struct stat st;
    CHECK(stat(theirs, &st) == 0 && st.st_size == 0, "their file was written");
    if (how == 1)
        CHECK(fcntl(was, F_GETFD) >= 0, "their descriptor was closed");
    close(other);
    if (how == 1)
        close(was);
    unlink(path);
    unlink(theirs);
    ZSTD_freeCCtx(c);
}

int main(void)
{
    for (int how = 0; how < 3; how++)
        guard(how);
    /* Sizes around XXH64's 32-byte stripes and zstd's 128 KiB blocks. */
    static const size_t sizes[] = {2, 31, 32, 33, 1000, 131072, 300001};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int in_frame = 0; in_frame < 2; in_frame++)
            for (int end_too = 0; end_too < 2; end_too++)
                one(in_frame, sizes[i], end_too);
    printf("test_tfile: ok\n");
    return 0;
}
