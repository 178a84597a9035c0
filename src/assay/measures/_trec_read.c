/* eval-trec's fast path in C: a TREC qrels file and a run file read in one pass each, and the run ranked
 * as trec_eval ranks it, keeping only what the measure tables need (assay.measures.trec_tables.from_read).
 * Built by hatch_build.py when a C compiler is at hand; without it, or when this code gives up on a file,
 * assay.measures.trec_eval reads both files with DuckDB (the reference reading) and ranks them in numpy, and
 * tests/test_trec_eval.py holds both paths to the same values.
 *
 *   read(qrels_path: str, run_path: str, threads: int, part_bytes: int = 8 MiB) -> dict | str
 *
 * The run is read by up to `threads` threads, one part of at least `part_bytes` bytes each (tests cut
 * small files into many parts). progress() -> (qrels bytes, run bytes) says how far the latest read()
 * has got, for a progress bar's thread to ask while it runs.
 *
 * A str is the reason this code gives up; the reference reading then decides, and names the line. It
 * gives up on anything it does not take exactly as the reference reading takes it: a line of another
 * width, a score or relevance outside the plain decimal forms below, a (query, document) pair listed
 * twice, a control byte, a carriage return not ending a line, bytes that are not UTF-8, a byte-order
 * mark, a file it cannot open, and a run whose lines of one query are not all together (the reference
 * reading takes any order; every tool writes a query's lines together).
 *
 * Reading, as sql/trec/macros.sql's trec_fields: columns are separated by runs of spaces and tabs,
 * leading and trailing blanks are ignored, a blank line is skipped, a line ends at \n or \r\n.
 * Scores: [+-]?(digits[.digits*] | .digits)([eE][+-]?digits)?, read to the nearest double (exactly
 * when the digits fit in 2^53 and the power of ten is at most 22, else by strtod, which rounds
 * correctly, as DuckDB's cast does). Relevance: [+-]?digits within a 32-bit integer.
 *
 * Ranking, as trec_eval: score descending, ties by document id descending in byte order (-0.0 equals
 * 0.0). The run is cut into one block per query; each block is checked for a repeated document
 * through a hash table of its lines, in which that query's relevant judgments are then looked up, and
 * the rank of each one found is 1 + the lines of the block ranked ahead of it (rank_found). Threads
 * take whole queries: the file is cut where one query's lines end. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#ifndef ASSAY_SOURCE_SHA256 /* hatch_build.py passes the SHA-256 of this file: trec_eval.py skips a stale build */
#define ASSAY_SOURCE_SHA256 ""
#endif

#define MAX_THREADS 64
/* Below this many bytes a run is read by one thread. */
#define THREAD_BYTES (8u << 20)

typedef struct {
    const char *p;
    size_t n;
} Str;

/* Bytes of the qrels and of the run read so far by the latest read(), for progress(): a progress bar's
 * thread asks while read() runs. Stored as whole words by one writer each (the run's: added to). */
static size_t read_qrels_bytes, read_run_bytes;
#define PROGRESS_STEP (1u << 20)

typedef struct {
    const char *data;
    size_t size;
} Map;

/* -- files ---------------------------------------------------------------------------------------- */
static const char *map_file(const char *path, Map *map) {
    map->data = NULL;
    map->size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return "cannot open the file";
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return "not a regular file";
    }
    map->size = (size_t)st.st_size;
    if (map->size) {
        void *p = mmap(NULL, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            close(fd);
            return "cannot map the file";
        }
        madvise(p, map->size, MADV_SEQUENTIAL);
        map->data = p;
    }
    close(fd);
    if (map->size >= 3 && memcmp(map->data, "\xEF\xBB\xBF", 3) == 0)
        return "a byte-order mark";
    return NULL;
}

static void unmap_file(Map *map) {
    if (map->data)
        munmap((void *)map->data, map->size);
    map->data = NULL;
}

/* -- lines ---------------------------------------------------------------------------------------- */
enum { ORDINARY = 0, BLANK = 1, END = 2, BAD = 3, HIGH = 4 };
static unsigned char CLASS[256];

static void init_classes(void) {
    for (int c = 0; c < 256; c++)
        CLASS[c] = c < 0x20 ? BAD : c >= 0x80 ? HIGH : ORDINARY;
    CLASS[' '] = CLASS['\t'] = BLANK;
    CLASS['\n'] = CLASS['\r'] = END;
}

static int valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned cp;
        if (c >= 0xC2 && c <= 0xDF)
            len = 2, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            len = 3, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            len = 4, cp = c & 0x07;
        else
            return 0;
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) /* overlong, a surrogate, past U+10FFFF */
            return 0;
        i += len;
    }
    return 1;
}

/* The columns of the line starting at *pos (up to `max` kept in f), *pos moved past its end. Returns the
 * number of columns (0: a blank line), or -1 for a byte this code does not take. Byte by byte. */
static int split_line_bytes(const char *s, size_t end, size_t *pos, Str *f, int max) {
    size_t i = *pos, start = i;
    int n = 0, high = 0;
    for (;;) {
        while (i < end && CLASS[(unsigned char)s[i]] == BLANK)
            i++;
        if (i >= end)
            break;
        if (CLASS[(unsigned char)s[i]] == END) {
            if (s[i] == '\r') {
                if (i + 1 >= end || s[i + 1] != '\n')
                    return -1;
                i++;
            }
            i++;
            break;
        }
        size_t first = i;
        unsigned char k;
        while (i < end && (k = CLASS[(unsigned char)s[i]]) != BLANK && k != END) {
            if (k == BAD)
                return -1;
            high |= k;
            i++;
        }
        if (n < max) {
            f[n].p = s + first;
            f[n].n = i - first;
        }
        n++;
    }
    if (high && !valid_utf8((const unsigned char *)s + start, i - start))
        return -1;
    *pos = i;
    return n;
}

/* split_line_bytes, 64 bytes at a time: masks of the blanks, the line end and the other bytes below
 * 0x21 or above 0x7f (any of which sends a line to the byte-by-byte reading), then columns from the
 * masks' bits. Lines of 64 bytes or more, and those near the end of the file, go byte by byte. */
static int split_line(const char *s, size_t end, size_t *pos, Str *f, int max) {
#ifdef __SSE2__
    size_t i = *pos;
    if (i + 64 <= end) {
        uint64_t blank = 0, newline = 0, special = 0;
        const __m128i space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), nl = _mm_set1_epi8('\n');
        const __m128i limit = _mm_set1_epi8(0x21);
        for (int b = 0; b < 4; b++) {
            __m128i x = _mm_loadu_si128((const __m128i *)(s + i + 16 * b));
            uint64_t bl = (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, space), _mm_cmpeq_epi8(x, tab)));
            uint64_t ne = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl));
            uint64_t sp = (uint32_t)_mm_movemask_epi8(_mm_cmplt_epi8(x, limit)); /* signed: >= 0x80 too */
            blank |= bl << (16 * b);
            newline |= ne << (16 * b);
            special |= sp << (16 * b);
        }
        if (newline) {
            int length = __builtin_ctzll(newline);
            uint64_t line = length == 0 ? 0 : (~0ull >> (64 - length));
            if (length && s[i + length - 1] == '\r') /* \r\n */
                line >>= 1;
            if (!(special & ~blank & line)) {
                uint64_t solid = ~blank & line;
                uint64_t starts = solid & ~(solid << 1), ends = solid & ~(solid >> 1);
                int n = 0;
                for (; starts; n++) {
                    if (n < max) {
                        int a = __builtin_ctzll(starts), e = __builtin_ctzll(ends);
                        f[n].p = s + i + a;
                        f[n].n = (size_t)(e - a + 1);
                    }
                    starts &= starts - 1;
                    ends &= ends - 1;
                }
                *pos = i + (size_t)length + 1;
                return n;
            }
        }
    }
#endif
    return split_line_bytes(s, end, pos, f, max);
}

/* Where the line holding byte `at` ends (past its \n), or `end`. */
static size_t next_line(const char *s, size_t end, size_t at) {
    const char *nl = at < end ? memchr(s + at, '\n', end - at) : NULL;
    return nl ? (size_t)(nl - s) + 1 : end;
}

/* -- numbers -------------------------------------------------------------------------------------- */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#define DIGIT(c) ((unsigned)((c) - '0') < 10u)

static int parse_score(Str f, double *out) {
    const char *p = f.p, *e = f.p + f.n;
    int negative = 0;
    if (p < e && (*p == '+' || *p == '-'))
        negative = *p++ == '-';
    uint64_t m = 0;
    int digits = 0, fraction = 0;
    while (p < e && DIGIT(*p)) {
        m = m * 10 + (uint64_t)(*p++ - '0');
        digits++;
    }
    if (p < e && *p == '.') {
        p++;
        while (p < e && DIGIT(*p)) {
            m = m * 10 + (uint64_t)(*p++ - '0');
            digits++, fraction++;
        }
    }
    if (!digits)
        return 0;
    long exponent = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int minus = 0;
        if (p < e && (*p == '+' || *p == '-'))
            minus = *p++ == '-';
        if (p >= e || !DIGIT(*p))
            return 0;
        while (p < e && DIGIT(*p)) {
            if (exponent < 100000)
                exponent = exponent * 10 + (*p - '0');
            p++;
        }
        if (minus)
            exponent = -exponent;
    }
    if (p != e)
        return 0;
    long power = exponent - fraction;
    double value;
    if (digits <= 19 && m <= (1ull << 53) && power >= -22 && power <= 22) {
        value = (double)m; /* exact; one multiplication or division then rounds correctly */
        value = power < 0 ? value / POW10[-power] : value * POW10[power];
    } else {
        char buffer[128];
        char *copy = f.n < sizeof buffer ? buffer : malloc(f.n + 1);
        if (!copy)
            return 0;
        memcpy(copy, f.p, f.n);
        copy[f.n] = 0;
        value = strtod(copy, NULL);
        if (copy != buffer)
            free(copy);
        negative = 0; /* strtod read the sign */
    }
    *out = negative ? -value : value;
    return 1;
}

static int parse_grade(Str f, int32_t *out) {
    const char *p = f.p, *e = f.p + f.n;
    int negative = 0;
    if (p < e && (*p == '+' || *p == '-'))
        negative = *p++ == '-';
    if (p >= e)
        return 0;
    int64_t v = 0;
    for (; p < e; p++) {
        if (!DIGIT(*p))
            return 0;
        v = v * 10 + (*p - '0');
        if (v > 2147483648LL)
            return 0;
    }
    v = negative ? -v : v;
    if (v > 2147483647LL)
        return 0;
    *out = (int32_t)v;
    return 1;
}

/* -- hashing -------------------------------------------------------------------------------------- */
static inline uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static inline uint64_t load64(const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t load32(const char *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* Reads only the string's own bytes: the last bytes by a word that overlaps the one before. */
static inline uint64_t hash_str(Str s) {
    const char *p = s.p;
    size_t n = s.n;
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n, a, b;
    while (n > 16) {
        h = (h ^ load64(p)) * 0xbf58476d1ce4e5b9ULL;
        h = (h ^ (h >> 29) ^ load64(p + 8)) * 0x94d049bb133111ebULL;
        h ^= h >> 32;
        p += 16;
        n -= 16;
    }
    if (n >= 8)
        a = load64(p), b = load64(p + n - 8);
    else if (n >= 4)
        a = load32(p), b = load32(p + n - 4);
    else if (n)
        a = (uint64_t)(unsigned char)p[0] << 16 | (uint64_t)(unsigned char)p[n >> 1] << 8 |
            (unsigned char)p[n - 1],
        b = 0;
    else
        a = b = 0;
    h = (h ^ a) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 29) ^ b) * 0x94d049bb133111ebULL;
    return mix(h);
}

static inline int same(Str a, Str b) {
    if (a.n != b.n)
        return 0;
    size_t n = a.n;
    const char *p = a.p, *q = b.p;
    if (n >= 8) {
        for (; n > 8; n -= 8, p += 8, q += 8)
            if (load64(p) != load64(q))
                return 0;
        return load64(a.p + a.n - 8) == load64(b.p + b.n - 8);
    }
    if (n >= 4)
        return load32(p) == load32(q) && load32(p + n - 4) == load32(q + n - 4);
    for (; n; n--)
        if (*p++ != *q++)
            return 0;
    return 1;
}

/* a > b in byte order (strcmp's order for strings without a zero byte) */
static inline int greater(Str a, Str b) {
    size_t n = a.n < b.n ? a.n : b.n;
    int c = memcmp(a.p, b.p, n);
    return c ? c > 0 : a.n > b.n;
}

static size_t table_size(size_t n) {
    size_t size = 16;
    while (size < 2 * n)
        size <<= 1;
    return size;
}

/* -- growing arrays ------------------------------------------------------------------------------- */
#define GROW(array, count, capacity)                                                                    \
    do {                                                                                                \
        if ((count) == (capacity)) {                                                                    \
            size_t cap_ = (capacity) ? 2 * (capacity) : 1024;                                           \
            void *p_ = realloc((array), cap_ * sizeof *(array));                                        \
            if (!p_)                                                                                    \
                return "out of memory";                                                                 \
            (array) = p_;                                                                               \
            (capacity) = cap_;                                                                          \
        }                                                                                               \
    } while (0)

/* -- qrels ---------------------------------------------------------------------------------------- */
typedef struct {
    Map map;
    size_t n;       /* judgments (lines), in file order */
    int32_t *query; /* query code of each: its query's place in first-seen order */
    int32_t *grade;
    Str *doc;
    uint64_t *hash; /* of the document id */
    size_t cap;
    /* query ids */
    size_t n_queries, q_cap;
    Str *ids;
    uint32_t *id_table; /* code + 1, 0 empty */
    size_t id_size;
    /* each query's relevant judgments (grade >= 1): by_query[starts[q] .. starts[q + 1]) */
    size_t *starts;
    uint32_t *by_query;
} Qrels;

static int64_t find_query(const Qrels *q, Str id, uint64_t h) {
    size_t mask = q->id_size - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t slot = q->id_table[i];
        if (!slot)
            return -1;
        if (same(q->ids[slot - 1], id))
            return slot - 1;
    }
}

static const char *add_query(Qrels *q, Str id, int32_t *code) {
    uint64_t h = hash_str(id);
    int64_t found = find_query(q, id, h);
    if (found >= 0) {
        *code = (int32_t)found;
        return NULL;
    }
    if (2 * (q->n_queries + 1) > q->id_size) {
        size_t size = table_size(2 * (q->n_queries + 1));
        uint32_t *table = calloc(size, sizeof *table);
        if (!table)
            return "out of memory";
        for (size_t c = 0; c < q->n_queries; c++) {
            size_t i = hash_str(q->ids[c]) & (size - 1);
            while (table[i])
                i = (i + 1) & (size - 1);
            table[i] = (uint32_t)c + 1;
        }
        free(q->id_table);
        q->id_table = table;
        q->id_size = size;
    }
    GROW(q->ids, q->n_queries, q->q_cap);
    q->ids[q->n_queries] = id;
    size_t i = h & (q->id_size - 1);
    while (q->id_table[i])
        i = (i + 1) & (q->id_size - 1);
    q->id_table[i] = (uint32_t)q->n_queries + 1;
    *code = (int32_t)q->n_queries++;
    return NULL;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A query's relevant judgments by grade, highest first (the ideal ranking); equal grades in file order. */
static void sort_by_grade(const Qrels *q, uint32_t *judgments, size_t k) {
    if (k <= 32) {
        for (size_t i = 1; i < k; i++) {
            uint32_t j = judgments[i];
            size_t t = i;
            for (; t > 0 && q->grade[judgments[t - 1]] < q->grade[j]; t--)
                judgments[t] = judgments[t - 1];
            judgments[t] = j;
        }
        return;
    }
    uint64_t *keys = malloc(k * sizeof *keys);
    if (!keys) { /* insertion sort then: slower, the same order */
        for (size_t i = 1; i < k; i++) {
            uint32_t j = judgments[i];
            size_t t = i;
            for (; t > 0 && q->grade[judgments[t - 1]] < q->grade[j]; t--)
                judgments[t] = judgments[t - 1];
            judgments[t] = j;
        }
        return;
    }
    for (size_t i = 0; i < k; i++) /* grades are >= 1 here */
        keys[i] = ((uint64_t)(uint32_t)(INT32_MAX - q->grade[judgments[i]]) << 32) | judgments[i];
    qsort(keys, k, sizeof *keys, compare_u64);
    for (size_t i = 0; i < k; i++)
        judgments[i] = (uint32_t)keys[i];
    free(keys);
}

static const char *read_qrels(Qrels *q, const char *path) {
    const char *why = map_file(path, &q->map);
    if (why)
        return why;
    q->id_size = 16;
    q->id_table = calloc(q->id_size, sizeof *q->id_table);
    if (!q->id_table)
        return "out of memory";
    const char *s = q->map.data;
    size_t pos = 0, end = q->map.size;
    Str f[4], last = {NULL, 0};
    int32_t code = -1;
    size_t told = 0;
    while (pos < end) {
        if (pos - told >= PROGRESS_STEP)
            __atomic_store_n(&read_qrels_bytes, told = pos, __ATOMIC_RELAXED);
        int n = split_line(s, end, &pos, f, 4);
        if (n == 0)
            continue;
        if (n != 4)
            return n < 0 ? "a byte the fast path does not take" : "a qrels line without 4 columns";
        int32_t grade;
        if (!parse_grade(f[3], &grade))
            return "a relevance that is not a plain whole number";
        if (!last.p || !same(f[0], last)) {
            why = add_query(q, f[0], &code);
            if (why)
                return why;
            last = f[0];
        }
        if (q->n == q->cap) {
            size_t cap = q->cap ? 2 * q->cap : 1024;
            int32_t *a = realloc(q->query, cap * sizeof *a), *b = a ? realloc(q->grade, cap * sizeof *b) : NULL;
            if (a)
                q->query = a;
            if (b)
                q->grade = b;
            Str *c = b ? realloc(q->doc, cap * sizeof *c) : NULL;
            if (c)
                q->doc = c;
            uint64_t *d = c ? realloc(q->hash, cap * sizeof *d) : NULL;
            if (!d)
                return "out of memory";
            q->hash = d;
            q->cap = cap;
        }
        q->query[q->n] = code;
        q->grade[q->n] = grade;
        q->doc[q->n] = f[2];
        q->hash[q->n] = hash_str(f[2]);
        q->n++;
    }
    __atomic_store_n(&read_qrels_bytes, end, __ATOMIC_RELAXED);
    if (q->n >= UINT32_MAX)
        return "too many judgments";
    /* every judgment by query (a counting sort), then each query checked for a repeated document */
    size_t nq = q->n_queries;
    q->starts = calloc(nq + 2, sizeof *q->starts);
    uint32_t *all = malloc((q->n + 1) * sizeof *all);
    q->by_query = malloc((q->n + 1) * sizeof *q->by_query);
    if (!q->starts || !all || !q->by_query) {
        free(all);
        return "out of memory";
    }
    size_t *count = q->starts + 1;
    for (size_t j = 0; j < q->n; j++)
        count[q->query[j]]++;
    size_t *at = malloc((nq + 1) * sizeof *at);
    if (!at) {
        free(all);
        return "out of memory";
    }
    at[0] = 0;
    for (size_t c = 0; c < nq; c++)
        at[c + 1] = at[c] + count[c];
    size_t *first = calloc(nq + 1, sizeof *first);
    if (!first) {
        free(all), free(at);
        return "out of memory";
    }
    memcpy(first, at, (nq + 1) * sizeof *at);
    for (size_t j = 0; j < q->n; j++)
        all[at[q->query[j]]++] = (uint32_t)j;
    why = NULL;
    uint32_t *table = NULL;
    size_t table_cap = 0, n_relevant = 0;
    q->starts[0] = 0;
    for (size_t c = 0; c < nq && !why; c++) {
        size_t k = first[c + 1] - first[c], size = table_size(k);
        if (size > table_cap) {
            free(table);
            table = malloc(size * sizeof *table);
            table_cap = size;
            if (!table) {
                why = "out of memory";
                break;
            }
        }
        memset(table, 0, size * sizeof *table);
        for (size_t t = first[c]; t < first[c + 1]; t++) {
            uint32_t j = all[t];
            size_t i = q->hash[j] & (size - 1);
            for (; table[i]; i = (i + 1) & (size - 1))
                if (q->hash[table[i] - 1] == q->hash[j] && same(q->doc[table[i] - 1], q->doc[j])) {
                    why = "a document judged twice for one query";
                    break;
                }
            if (why)
                break;
            table[i] = j + 1;
            if (q->grade[j] >= 1)
                q->by_query[n_relevant++] = j;
        }
        q->starts[c + 1] = n_relevant;
        sort_by_grade(q, q->by_query + q->starts[c], n_relevant - q->starts[c]);
    }
    free(table), free(all), free(at), free(first);
    return why;
}

static void free_qrels(Qrels *q) {
    free(q->query), free(q->grade), free(q->doc), free(q->hash), free(q->ids), free(q->id_table);
    free(q->starts), free(q->by_query);
    unmap_file(&q->map);
}

/* -- run ------------------------------------------------------------------------------------------ */
typedef struct {
    const Qrels *qrels;
    const char *s;
    size_t begin, end;
    const char *why;
    /* one query's lines */
    double *score;
    Str *doc;
    uint64_t *hash;
    size_t n, cap;
    uint32_t *table;
    size_t table_cap;
    /* what is kept: relevant documents retrieved (judgment, rank), lines of each qrels query */
    uint32_t *found;
    int64_t *rank;
    size_t n_found, found_cap;
    int64_t *lines; /* per qrels query code */
    Str *others;    /* the id of each block of a query outside the qrels */
    size_t n_others, others_cap;
} Worker;

static const char *grow_block(Worker *w) {
    size_t cap = w->cap ? 2 * w->cap : 1024;
    double *a = realloc(w->score, cap * sizeof *a);
    if (!a)
        return "out of memory";
    w->score = a;
    Str *b = realloc(w->doc, cap * sizeof *b);
    if (!b)
        return "out of memory";
    w->doc = b;
    uint64_t *c = realloc(w->hash, cap * sizeof *c);
    if (!c)
        return "out of memory";
    w->hash = c;
    w->cap = cap;
    return NULL;
}

static const char *use_table(Worker *w, size_t size) {
    if (size > w->table_cap) {
        free(w->table);
        w->table = malloc(size * sizeof *w->table);
        w->table_cap = w->table ? size : 0;
        if (!w->table)
            return "out of memory";
    }
    memset(w->table, 0, size * sizeof *w->table);
    return NULL;
}

/* How many of n scores are greater than `mine` (*ahead), and how many equal it (*equal). */
static void count_scores(const double *score, size_t n, double mine, int64_t *ahead, int64_t *equal) {
    size_t t = 0;
    int64_t a = 0, e = 0;
#ifdef __SSE2__
    const __m128d m = _mm_set1_pd(mine);
    __m128i a0 = _mm_setzero_si128(), a1 = a0, e0 = a0, e1 = a0;
    for (; t + 4 <= n; t += 4) { /* a true comparison is all ones: -1 as an integer */
        __m128d x = _mm_loadu_pd(score + t), y = _mm_loadu_pd(score + t + 2);
        a0 = _mm_sub_epi64(a0, _mm_castpd_si128(_mm_cmpgt_pd(x, m)));
        a1 = _mm_sub_epi64(a1, _mm_castpd_si128(_mm_cmpgt_pd(y, m)));
        e0 = _mm_sub_epi64(e0, _mm_castpd_si128(_mm_cmpeq_pd(x, m)));
        e1 = _mm_sub_epi64(e1, _mm_castpd_si128(_mm_cmpeq_pd(y, m)));
    }
    int64_t lanes[2];
    _mm_storeu_si128((__m128i *)lanes, _mm_add_epi64(a0, a1));
    a = lanes[0] + lanes[1];
    _mm_storeu_si128((__m128i *)lanes, _mm_add_epi64(e0, e1));
    e = lanes[0] + lanes[1];
#endif
    for (; t < n; t++) {
        a += score[t] > mine;
        e += score[t] == mine;
    }
    *ahead = a;
    *equal = e;
}

static const char *rank_found(Worker *w, int64_t *rank, size_t m);

static int compare_i64_pairs(const void *x, const void *y) {
    int64_t a = ((const int64_t *)x)[0], b = ((const int64_t *)y)[0];
    return (a > b) - (a < b);
}

/* One query's found judgments and their ranks, ordered by rank (ranks are distinct). */
static void by_rank(uint32_t *found, int64_t *rank, size_t m) {
    if (m <= 32) {
        for (size_t i = 1; i < m; i++) {
            uint32_t f = found[i];
            int64_t r = rank[i];
            size_t t = i;
            for (; t > 0 && rank[t - 1] > r; t--) {
                found[t] = found[t - 1];
                rank[t] = rank[t - 1];
            }
            found[t] = f;
            rank[t] = r;
        }
        return;
    }
    int64_t *pairs = malloc(2 * m * sizeof *pairs);
    if (!pairs)
        return; /* left in judgment order: the same values, sorted a little more by DuckDB */
    for (size_t i = 0; i < m; i++)
        pairs[2 * i] = rank[i], pairs[2 * i + 1] = found[i];
    qsort(pairs, m, 2 * sizeof *pairs, compare_i64_pairs);
    for (size_t i = 0; i < m; i++)
        rank[i] = pairs[2 * i], found[i] = (uint32_t)pairs[2 * i + 1];
    free(pairs);
}

/* One query's lines (w->score, doc, hash; w->n of them) of query `code` (-1: not in the qrels). */
static const char *finish_query(Worker *w, int64_t code, Str id) {
    size_t n = w->n, size = table_size(n);
    const char *why = use_table(w, size);
    if (why)
        return why;
    uint32_t *table = w->table;
    for (size_t j = 0; j < n; j++) {
        size_t i = w->hash[j] & (size - 1);
        for (; table[i]; i = (i + 1) & (size - 1))
            if (w->hash[table[i] - 1] == w->hash[j] && same(w->doc[table[i] - 1], w->doc[j]))
                return "a document listed twice for one query";
        table[i] = (uint32_t)j + 1;
    }
    if (code < 0) {
        GROW(w->others, w->n_others, w->others_cap);
        w->others[w->n_others++] = id;
        return NULL;
    }
    const Qrels *q = w->qrels;
    if (w->lines[code])
        return "a run whose lines of one query are not together";
    w->lines[code] = (int64_t)n;
    size_t k = q->starts[code + 1] - q->starts[code];
    if (!k)
        return NULL;
    /* the table now holds every line of the query: look each relevant judgment up in it */
    const uint32_t *relevant = q->by_query + q->starts[code];
    size_t first = w->n_found;
    for (size_t r = 0; r < k; r++) {
        uint32_t j = relevant[r];
        uint64_t h = q->hash[j];
        size_t i = h & (size - 1);
        for (; table[i]; i = (i + 1) & (size - 1)) {
            size_t line = table[i] - 1;
            if (w->hash[line] == h && same(w->doc[line], q->doc[j])) {
                if (w->n_found == w->found_cap) {
                    size_t cap = w->found_cap ? 2 * w->found_cap : 1024;
                    uint32_t *a = realloc(w->found, cap * sizeof *a);
                    if (!a)
                        return "out of memory";
                    w->found = a;
                    int64_t *b = realloc(w->rank, cap * sizeof *b);
                    if (!b)
                        return "out of memory";
                    w->rank = b;
                    w->found_cap = cap;
                }
                w->found[w->n_found] = j;
                w->rank[w->n_found++] = (int64_t)line; /* its line, until ranked below */
                break;
            }
        }
    }
    why = rank_found(w, w->rank + first, w->n_found - first);
    if (!why) /* by rank: the measure queries sort less (their window and ordered sums sort by rank) */
        by_rank(w->found + first, w->rank + first, w->n_found - first);
    return why;
}

typedef struct {
    double score;
    Str doc;
    size_t slot;
} Key;

/* trec_eval's order: a ranks ahead of b */
static inline int ahead_of(double a_score, Str a_doc, double b_score, Str b_doc) {
    return a_score > b_score || (a_score == b_score && greater(a_doc, b_doc));
}

static int compare_keys(const void *x, const void *y) {
    const Key *a = x, *b = y;
    return ahead_of(a->score, a->doc, b->score, b->doc) ? -1 : ahead_of(b->score, b->doc, a->score, a->doc);
}

/* Each of the m found lines (rank[i] holds its line in the block) given its rank: 1 + the block's lines
 * ranked ahead of it (a greater score, or an equal one and a greater document id). Few of them: each
 * counts the scores above its own; many: they are sorted, and each line of the block finds by binary
 * search the first found line it ranks ahead of, so the work grows as n log m, not n m. */
static const char *rank_found(Worker *w, int64_t *rank, size_t m) {
    size_t n = w->n;
    if (m <= 32) {
        for (size_t i = 0; i < m; i++) {
            size_t line = (size_t)rank[i];
            double mine = w->score[line];
            int64_t ahead, equal;
            count_scores(w->score, n, mine, &ahead, &equal);
            if (equal > 1)
                for (size_t t = 0; t < n; t++)
                    ahead += w->score[t] == mine && t != line && greater(w->doc[t], w->doc[line]);
            rank[i] = ahead + 1;
        }
        return NULL;
    }
    Key *keys = malloc(m * sizeof *keys);
    int64_t *starting = calloc(m + 1, sizeof *starting);
    if (!keys || !starting) {
        free(keys), free(starting);
        return "out of memory";
    }
    for (size_t i = 0; i < m; i++) {
        keys[i].score = w->score[rank[i]];
        keys[i].doc = w->doc[rank[i]];
        keys[i].slot = i;
    }
    qsort(keys, m, sizeof *keys, compare_keys); /* the first ranks first */
    for (size_t t = 0; t < n; t++) {
        size_t lo = 0, hi = m; /* the first found line that line t ranks ahead of */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (ahead_of(w->score[t], w->doc[t], keys[mid].score, keys[mid].doc))
                hi = mid;
            else
                lo = mid + 1;
        }
        starting[lo]++;
    }
    int64_t ahead = 0;
    for (size_t i = 0; i < m; i++) {
        ahead += starting[i];
        rank[keys[i].slot] = ahead + 1;
    }
    free(keys), free(starting);
    return NULL;
}

static const char *read_run(Worker *w) {
    const char *s = w->s;
    size_t pos = w->begin, end = w->end, told = pos;
    Str f[6], id = {NULL, 0};
    int64_t code = -1;
    const char *why;
    while (pos < end) {
        int n = split_line(s, end, &pos, f, 6);
        if (n == 0)
            continue;
        if (n != 6)
            return n < 0 ? "a byte the fast path does not take" : "a run line without 6 columns";
        if (!id.p || !same(f[0], id)) {
            if (id.p && (why = finish_query(w, code, id)))
                return why;
            if (pos - told >= PROGRESS_STEP) {
                __atomic_fetch_add(&read_run_bytes, pos - told, __ATOMIC_RELAXED);
                told = pos;
            }
            id = f[0];
            /* a run lists its queries mostly in the qrels' order: try the one after the last first */
            const Qrels *q = w->qrels;
            if (code >= 0 && (size_t)code + 1 < q->n_queries && same(q->ids[code + 1], id))
                code++;
            else
                code = find_query(q, id, hash_str(id));
            w->n = 0;
        }
        if (w->n == w->cap && (why = grow_block(w)))
            return why;
        if (!parse_score(f[4], &w->score[w->n]))
            return "a score that is not a plain decimal number";
        w->doc[w->n] = f[2];
        w->hash[w->n] = hash_str(f[2]);
        w->n++;
        if (w->n >= UINT32_MAX)
            return "too many lines for one query";
    }
    __atomic_fetch_add(&read_run_bytes, end - told, __ATOMIC_RELAXED);
    return id.p ? finish_query(w, code, id) : NULL;
}

static void *work(void *arg) {
    Worker *w = arg;
    w->why = read_run(w);
    return NULL;
}

static void free_worker(Worker *w) {
    free(w->score), free(w->doc), free(w->hash), free(w->table), free(w->found), free(w->rank);
    free(w->lines), free(w->others);
}

/* The first column of the line starting at `at`. */
static Str first_column(const char *s, size_t end, size_t at) {
    while (at < end && CLASS[(unsigned char)s[at]] == BLANK)
        at++;
    size_t first = at;
    while (at < end && CLASS[(unsigned char)s[at]] != BLANK && CLASS[(unsigned char)s[at]] != END)
        at++;
    Str id = {s + first, at - first};
    return id;
}

/* A place near `at` where one query's lines end and the next query's begin (or `end`). */
static size_t query_boundary(const char *s, size_t end, size_t at) {
    size_t line = next_line(s, end, at);
    Str id = first_column(s, end, line);
    while (!id.n && line < end) { /* a blank line: the query is the next line's */
        line = next_line(s, end, line);
        id = first_column(s, end, line);
    }
    while (line < end) {
        size_t next = next_line(s, end, line);
        if (next >= end)
            return end;
        Str other = first_column(s, end, next);
        if (other.n && !same(other, id)) /* a blank line (n 0) belongs to either side */
            return next;
        line = next;
    }
    return end;
}

static int compare_str(const void *a, const void *b) {
    const Str *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->p, y->p, n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

typedef struct {
    Str id;
    uint32_t code;
} Named;

static int compare_named(const void *a, const void *b) {
    return compare_str(&((const Named *)a)->id, &((const Named *)b)->id);
}

/* -- Python --------------------------------------------------------------------------------------- */
/* A bytearray of n items of `size` bytes (at least one byte: Arrow wants a buffer), or NULL. */
static PyObject *buffer(PyObject *out, const char *name, size_t n, size_t size, void **data) {
    PyObject *b = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(n * size + 1));
    if (!b)
        return NULL;
    if (PyDict_SetItemString(out, name, b) < 0) {
        Py_DECREF(b);
        return NULL;
    }
    Py_DECREF(b); /* the dict holds it */
    *data = PyByteArray_AS_STRING(b);
    return b;
}

/* What assay.measures.trec_tables.from_read reads; every query named by its code: its place among the qrels'
 * query ids in byte order (query_ids, in that order). */
static PyObject *result(const Qrels *q, Worker *workers, int n_workers) {
    size_t nq = q->n_queries, n_found = 0, n_relevant = q->starts[nq], chars = 0;
    for (int t = 0; t < n_workers; t++)
        for (size_t i = 0; i < workers[t].n_found; i++)
            chars += q->doc[workers[t].found[i]].n;
    n_found = 0;
    for (int t = 0; t < n_workers; t++)
        n_found += workers[t].n_found;
    Str *sorted = malloc((nq + 1) * sizeof *sorted);
    uint32_t *code = malloc((nq + 1) * sizeof *code), *first_seen = malloc((nq + 1) * sizeof *first_seen);
    Named *named = malloc((nq + 1) * sizeof *named);
    PyObject *out = PyDict_New(), *ids = PyList_New((Py_ssize_t)nq);
    if (!sorted || !code || !first_seen || !named || !out || !ids) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto fail;
    }
    /* the ids in byte order; each id's place there is its code (ids are distinct: ties never occur) */
    for (size_t c = 0; c < nq; c++) {
        named[c].id = q->ids[c];
        named[c].code = (uint32_t)c;
    }
    qsort(named, nq, sizeof *named, compare_named);
    for (size_t p = 0; p < nq; p++) {
        sorted[p] = named[p].id;
        first_seen[p] = named[p].code;
        code[named[p].code] = (uint32_t)p;
        PyObject *id = PyUnicode_DecodeUTF8(sorted[p].p, (Py_ssize_t)sorted[p].n, "strict");
        if (!id)
            goto fail;
        PyList_SET_ITEM(ids, (Py_ssize_t)p, id);
    }
    if (PyDict_SetItemString(out, "query_ids", ids) < 0)
        goto fail;
    Py_CLEAR(ids);
    int32_t *ideal_query, *ideal_gain, *unit_query, *judged_query, *judged_gain;
    int64_t *ideal_rank, *units, *judged_rank, *offsets, *lines, *id_offsets;
    char *items, *id_data;
    size_t id_chars = 0;
    for (size_t p = 0; p < nq; p++)
        id_chars += sorted[p].n;
    size_t n_units = 0;
    for (size_t c = 0; c < nq; c++)
        n_units += q->starts[c + 1] > q->starts[c];
    if (!buffer(out, "ideal_query", n_relevant, 4, (void **)&ideal_query) ||
        !buffer(out, "ideal_gain", n_relevant, 4, (void **)&ideal_gain) ||
        !buffer(out, "ideal_rank", n_relevant, 8, (void **)&ideal_rank) ||
        !buffer(out, "unit_query", n_units, 4, (void **)&unit_query) ||
        !buffer(out, "n_units", n_units, 8, (void **)&units) ||
        !buffer(out, "judged_query", n_found, 4, (void **)&judged_query) ||
        !buffer(out, "judged_rank", n_found, 8, (void **)&judged_rank) ||
        !buffer(out, "judged_gain", n_found, 4, (void **)&judged_gain) ||
        !buffer(out, "judged_item_offsets", n_found + 1, 8, (void **)&offsets) ||
        !buffer(out, "judged_item_data", chars, 1, (void **)&items) ||
        !buffer(out, "lines", nq, 8, (void **)&lines) ||
        !buffer(out, "query_id_offsets", nq + 1, 8, (void **)&id_offsets) ||
        !buffer(out, "query_id_data", id_chars, 1, (void **)&id_data))
        goto fail;
    id_offsets[0] = 0;
    for (size_t p = 0; p < nq; p++) {
        memcpy(id_data + id_offsets[p], sorted[p].p, sorted[p].n);
        id_offsets[p + 1] = id_offsets[p] + (int64_t)sorted[p].n;
    }
    /* the ideal ranking and the units, query by query in code order */
    size_t at = 0, u = 0;
    for (size_t p = 0; p < nq; p++) {
        size_t c = first_seen[p];
        size_t k = q->starts[c + 1] - q->starts[c];
        const uint32_t *relevant = q->by_query + q->starts[c];
        for (size_t r = 0; r < k; r++, at++) {
            ideal_query[at] = (int32_t)p;
            ideal_gain[at] = q->grade[relevant[r]];
            ideal_rank[at] = (int64_t)r + 1;
        }
        if (k) {
            unit_query[u] = (int32_t)p;
            units[u++] = (int64_t)k;
        }
        lines[p] = 0;
        for (int t = 0; t < n_workers; t++)
            lines[p] += workers[t].lines[c];
    }
    at = 0;
    offsets[0] = 0;
    for (int t = 0; t < n_workers; t++)
        for (size_t i = 0; i < workers[t].n_found; i++, at++) {
            uint32_t j = workers[t].found[i];
            judged_query[at] = (int32_t)code[q->query[j]];
            judged_rank[at] = workers[t].rank[i];
            judged_gain[at] = q->grade[j];
            memcpy(items + offsets[at], q->doc[j].p, q->doc[j].n);
            offsets[at + 1] = offsets[at] + (int64_t)q->doc[j].n;
        }
    PyObject *sizes = Py_BuildValue("(nnn)", (Py_ssize_t)n_relevant, (Py_ssize_t)n_units, (Py_ssize_t)n_found);
    if (!sizes || PyDict_SetItemString(out, "sizes", sizes) < 0) {
        Py_XDECREF(sizes);
        goto fail;
    }
    Py_DECREF(sizes);
    free(sorted), free(code), free(first_seen), free(named);
    return out;
fail:
    free(sorted), free(code), free(first_seen), free(named);
    Py_XDECREF(ids);
    Py_XDECREF(out);
    return NULL;
}

static PyObject *py_read(PyObject *self, PyObject *args) {
    const char *qrels_path, *run_path;
    int threads;
    Py_ssize_t part_bytes = THREAD_BYTES;
    if (!PyArg_ParseTuple(args, "ssi|n", &qrels_path, &run_path, &threads, &part_bytes))
        return NULL;
    if (part_bytes < 1)
        part_bytes = 1;
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    Qrels q;
    memset(&q, 0, sizeof q);
    Map run = {NULL, 0};
    Worker workers[MAX_THREADS];
    memset(workers, 0, sizeof workers);
    int n_workers = 0;
    const char *why = NULL;
    __atomic_store_n(&read_qrels_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&read_run_bytes, 0, __ATOMIC_RELAXED);
    Py_BEGIN_ALLOW_THREADS;
    why = read_qrels(&q, qrels_path);
    if (!why)
        why = map_file(run_path, &run);
    if (!why) {
        size_t parts = run.size / (size_t)part_bytes + 1;
        if (parts > (size_t)threads)
            parts = (size_t)threads;
        size_t begin = 0;
        for (size_t t = 0; t < parts && begin < run.size && !why; t++) {
            size_t end = t + 1 == parts ? run.size : query_boundary(run.data, run.size, run.size / parts * (t + 1));
            if (end < begin)
                end = begin;
            Worker *w = &workers[n_workers++];
            w->qrels = &q;
            w->s = run.data;
            w->begin = begin;
            w->end = end;
            w->lines = calloc(q.n_queries + 1, sizeof *w->lines);
            if (!w->lines)
                why = "out of memory";
            begin = end;
        }
        pthread_t ids[MAX_THREADS];
        int started[MAX_THREADS] = {0};
        for (int t = 1; t < n_workers && !why; t++)
            started[t] = pthread_create(&ids[t], NULL, work, &workers[t]) == 0;
        if (!why && n_workers)
            work(&workers[0]);
        for (int t = 1; t < n_workers; t++) {
            if (started[t])
                pthread_join(ids[t], NULL);
            else if (!why)
                work(&workers[t]);
        }
        for (int t = 0; t < n_workers && !why; t++)
            why = workers[t].why;
        /* a query in two workers' parts, or in two places of one part, is not together */
        for (size_t c = 0; c < q.n_queries && !why; c++) {
            int seen = 0;
            for (int t = 0; t < n_workers; t++)
                seen += workers[t].lines[c] > 0;
            if (seen > 1)
                why = "a run whose lines of one query are not together";
        }
        if (!why) {
            size_t n_others = 0;
            for (int t = 0; t < n_workers; t++)
                n_others += workers[t].n_others;
            Str *others = malloc((n_others + 1) * sizeof *others);
            if (!others)
                why = "out of memory";
            else {
                size_t at = 0;
                for (int t = 0; t < n_workers; t++)
                    for (size_t i = 0; i < workers[t].n_others; i++)
                        others[at++] = workers[t].others[i];
                qsort(others, n_others, sizeof *others, compare_str);
                for (size_t i = 1; i < n_others && !why; i++)
                    if (same(others[i], others[i - 1]))
                        why = "a run whose lines of one query are not together";
                free(others);
            }
        }
    }
    Py_END_ALLOW_THREADS;
    PyObject *out = why ? PyUnicode_FromString(why) : result(&q, workers, n_workers);
    for (int t = 0; t < n_workers; t++)
        free_worker(&workers[t]);
    free_qrels(&q);
    unmap_file(&run);
    return out;
}

static PyObject *py_progress(PyObject *self, PyObject *args) {
    (void)self, (void)args;
    return Py_BuildValue("(nn)", (Py_ssize_t)__atomic_load_n(&read_qrels_bytes, __ATOMIC_RELAXED),
                         (Py_ssize_t)__atomic_load_n(&read_run_bytes, __ATOMIC_RELAXED));
}

static PyMethodDef methods[] = {
    {"read", py_read, METH_VARARGS,
     "read(qrels_path, run_path, threads, part_bytes=8 MiB) -> dict, or a str: why this code gives up on the files"},
    {"progress", py_progress, METH_NOARGS,
     "progress() -> (qrels bytes, run bytes): how far the latest read() has got (asked from another thread)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trec_read", NULL, -1, methods};

PyMODINIT_FUNC PyInit__trec_read(void) {
    init_classes();
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "SOURCE_SHA256", ASSAY_SOURCE_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
