/* The recursive chunker's spans in C: the rule of recursive.py (tests/inputs/chunking/reference_recursive.py
 * states it in Python), step for step, for speed. Built by hatch_build.py when a C compiler is at hand;
 * without it recursive.py computes the same spans in Python. Every function below names the Python it
 * mirrors; tests/inputs/chunking/test_recursive_reference.py holds both to the reference.
 *
 *   spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]
 *
 * Offsets are code points, as Python's. "Whitespace" is str.isspace (Py_UNICODE_ISSPACE), which is
 * what the regex \s of the separators means too. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#ifndef ASSAY_SOURCE_SHA256 /* hatch_build.py passes the SHA-256 of this file: recursive.py skips a stale build */
#define ASSAY_SOURCE_SHA256 ""
#endif

typedef struct {
    Py_ssize_t start, end;
} Span;

typedef struct {
    Span *items;
    Py_ssize_t len, cap;
} Spans;

typedef struct {
    PyObject *str;
    int kind;
    const void *data;
    Py_ssize_t n, size, overlap;
} Text;

#define AT(t, i) PyUnicode_READ((t)->kind, (t)->data, (i))
#define SPACE(c) Py_UNICODE_ISSPACE(c)
#define BLANK(c) ((c) == ' ' || (c) == '\t')

static int push(Spans *s, Py_ssize_t start, Py_ssize_t end) {
    if (s->len == s->cap) {
        Py_ssize_t cap = s->cap ? 2 * s->cap : 64;
        Span *items = realloc(s->items, (size_t)cap * sizeof(Span));
        if (!items)
            return -1;
        s->items = items;
        s->cap = cap;
    }
    s->items[s->len].start = start;
    s->items[s->len].end = end;
    s->len++;
    return 0;
}

/* assay.inputs.chunking.trim */
static void trim(const Text *t, Py_ssize_t *start, Py_ssize_t *end) {
    Py_ssize_t s = *start, e = *end;
    while (s < e && SPACE(AT(t, s)))
        s++;
    while (e > s && SPACE(AT(t, e - 1)))
        e--;
    *start = s;
    *end = e;
}

static Py_ssize_t length(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    trim(t, &start, &end);
    return end - start;
}

/* -- separators: the end of the next match of _SEPARATORS[level].finditer(text, from, end) ---------- */

static int adornment_char(Py_UCS4 c, int backtick) {
    switch (c) {
    case '=': case '-': case '~': case '^': case '"': case '\'': case '#': case '*': case '+':
    case '<': case '>': case ':': case '_': case '.':
        return 1;
    case '`':
        return backtick;
    default:
        return 0;
    }
}

/* (?![ \t]*([=\-~^\"'#*+<>:_.])\1{2,}[ \t]*$) at i, re.M, the string ending at end: not an underline */
static int underline_at(const Text *t, Py_ssize_t i, Py_ssize_t end) {
    while (i < end && BLANK(AT(t, i)))
        i++;
    if (i >= end)
        return 0;
    Py_UCS4 c = AT(t, i);
    if (!adornment_char(c, 0))
        return 0;
    Py_ssize_t j = i;
    while (j < end && AT(t, j) == c)
        j++;
    if (j - i < 3)
        return 0;
    while (j < end && BLANK(AT(t, j)))
        j++;
    return j == end || AT(t, j) == '\n';
}

/* Where a separator's matches may begin: line breaks and . ! ? are found with PyUnicode_FindChar
 * (str.find's fast search); the next of each is kept, as a part is searched from left to right. */
typedef struct {
    const Text *t;
    int level;
    Py_ssize_t end, next[3];
} Search;

static const Py_UCS4 MARKS[3] = {'.', '!', '?'};

static Py_ssize_t find(const Text *t, Py_UCS4 c, Py_ssize_t from, Py_ssize_t end) {
    Py_ssize_t i = from < end ? PyUnicode_FindChar(t->str, c, from, end, 1) : -1;
    return i < 0 ? end : i; /* (-2, an error, cannot happen for a valid range) */
}

static void search_init(Search *s, const Text *t, int level, Py_ssize_t from, Py_ssize_t end) {
    s->t = t;
    s->level = level;
    s->end = end;
    if (level == 2)
        for (int k = 0; k < 3; k++)
            s->next[k] = find(t, MARKS[k], from > 0 ? from - 1 : 0, end);
}

/* The next . ! ? at or after `from` - 1 (the lookbehind sees one character before the search). */
static Py_ssize_t next_mark(Search *s, Py_ssize_t from) {
    Py_ssize_t best = s->end, lo = from > 0 ? from - 1 : 0;
    for (int k = 0; k < 3; k++) {
        if (s->next[k] < lo)
            s->next[k] = find(s->t, MARKS[k], lo, s->end);
        if (s->next[k] < best)
            best = s->next[k];
    }
    return best;
}

/* The end of the next match of _SEPARATORS[level].finditer(text, <part start>, end) at or after `from`. */
static Py_ssize_t next_match_end(Search *s, Py_ssize_t from) {
    const Text *t = s->t;
    Py_ssize_t end = s->end, i, j;
    switch (s->level) {
    case 0: /* \n[ \t]*\n\s* */
        for (i = find(t, '\n', from, end); i < end; i = find(t, '\n', i + 1, end)) {
            for (j = i + 1; j < end && BLANK(AT(t, j)); j++)
                ;
            if (j < end && AT(t, j) == '\n') {
                for (j++; j < end && SPACE(AT(t, j)); j++)
                    ;
                return j;
            }
        }
        return -1;
    case 1: /* \n not before an underline */
        for (i = find(t, '\n', from, end); i < end; i = find(t, '\n', i + 1, end))
            if (!underline_at(t, i + 1, end))
                return i + 1;
        return -1;
    case 2: /* (?<=[.!?])\s+ : the lookbehind sees the character before the search */
        for (i = next_mark(s, from); i < end; i = next_mark(s, i + 2)) {
            if (i + 1 >= end || !SPACE(AT(t, i + 1))) /* (i >= from - 1: next_mark) */
                continue;
            for (j = i + 2; j < end && SPACE(AT(t, j)); j++)
                ;
            return j;
        }
        return -1;
    default: /* \s+ */
        for (i = from; i < end; i++)
            if (SPACE(AT(t, i))) {
                for (j = i + 1; j < end && SPACE(AT(t, j)); j++)
                    ;
                return j;
            }
        return -1;
    }
}

/* RecursiveChunker._pieces */
static int pieces(const Text *t, Py_ssize_t start, Py_ssize_t end, int level, Spans *out) {
    for (;;) {
        Py_ssize_t s = start, e = end;
        trim(t, &s, &e);
        if (e - s <= t->size)
            return push(out, start, end);
        if (level == 4) {
            for (Py_ssize_t i = s; i < e; i += t->size)
                if (push(out, i, i + t->size < e ? i + t->size : e) < 0)
                    return -1;
            return 0;
        }
        Search search;
        search_init(&search, t, level, start, end);
        Py_ssize_t cut = next_match_end(&search, start);
        if (cut < 0 || cut >= end) { /* one part: the next level splits it */
            level++;
            continue;
        }
        Py_ssize_t prev = start;
        while (cut >= 0 && cut < end) {
            if (pieces(t, prev, cut, level + 1, out) < 0)
                return -1;
            prev = cut;
            cut = next_match_end(&search, cut);
        }
        return pieces(t, prev, end, level + 1, out);
    }
}

/* -- headings --------------------------------------------------------------------------------- */

static const char CLOSING[] = ".!?:;,)|]}>`";
static const char NOT_HEADING_START[] = "-*+|`><";

static int in(Py_UCS4 c, const char *set) {
    for (; *set; set++)
        if (c == (Py_UCS4)(unsigned char)*set)
            return 1;
    return 0;
}

/* _RST_ADORNMENT.match: ^([=\-~^\"'`#*+<>:_.])\1{2,}$ over [s, e) */
static int rst_adornment(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    if (e - s < 3 || !adornment_char(AT(t, s), 1))
        return 0;
    Py_UCS4 c = AT(t, s);
    for (Py_ssize_t i = s + 1; i < e; i++)
        if (AT(t, i) != c)
            return 0;
    return 1;
}

/* _MD_HEADING.match: ^#{1,6}\s+\S over [s, e) */
static int md_heading(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    Py_ssize_t i = s;
    while (i < e && AT(t, i) == '#')
        i++;
    if (i == s || i - s > 6 || i >= e || !SPACE(AT(t, i)))
        return 0;
    while (i < e && SPACE(AT(t, i)))
        i++;
    return i < e;
}

/* _NUMBERED.match: ^\d+[.)]\s over [s, e) */
static int numbered(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    Py_ssize_t i = s;
    while (i < e && Py_UNICODE_ISDECIMAL(AT(t, i)))
        i++;
    if (i == s || i + 1 >= e)
        return 0;
    Py_UCS4 c = AT(t, i);
    return (c == '.' || c == ')') && SPACE(AT(t, i + 1));
}

/* the line breaks of str.splitlines */
static int line_break(Py_UCS4 c) {
    switch (c) {
    case '\n': case '\r': case 0x0b: case 0x0c: case 0x1c: case 0x1d: case 0x1e: case 0x85:
    case 0x2028: case 0x2029:
        return 1;
    default:
        return 0;
    }
}

/* is_heading over the trimmed text [s, e) */
static int is_heading(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    Py_ssize_t lines = 0, first_s = 0, first_e = 0, last_s = 0, last_e = 0;
    int all_md = 1;
    Py_ssize_t i = s;
    while (i < e) {
        Py_ssize_t ls = i;
        while (i < e && !line_break(AT(t, i)))
            i++;
        Py_ssize_t le = i;
        if (i < e) {
            if (AT(t, i) == '\r' && i + 1 < e && AT(t, i + 1) == '\n')
                i++;
            i++;
        }
        trim(t, &ls, &le);
        if (le <= ls)
            continue;
        if (lines++ == 0) {
            first_s = ls;
            first_e = le;
        }
        last_s = ls;
        last_e = le;
        if (all_md && !md_heading(t, ls, le))
            all_md = 0;
    }
    if (lines == 0)
        return 0;
    if (all_md)
        return 1;
    if ((lines == 2 || lines == 3) && rst_adornment(t, last_s, last_e) &&
        (lines == 2 || rst_adornment(t, first_s, first_e)))
        return 1;
    if (lines == 1)
        return first_e - first_s <= 80 && !in(AT(t, first_e - 1), CLOSING) &&
               !in(AT(t, first_s), NOT_HEADING_START) && !numbered(t, first_s, first_e);
    return 0;
}

static Py_ssize_t count_newlines(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    Py_ssize_t k = 0;
    for (; s < e; s++)
        k += AT(t, s) == '\n';
    return k;
}

/* _is_heading_piece */
static int is_heading_piece(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t s = start, e = end, n = t->n;
    trim(t, &s, &e);
    if (e <= s)
        return 0;
    Py_ssize_t before = s, after = e;
    while (before > 0 && BLANK(AT(t, before - 1)))
        before--;
    while (after < n && BLANK(AT(t, after)))
        after++;
    if ((before > 0 && AT(t, before - 1) != '\n') || (after < n && AT(t, after) != '\n'))
        return 0;
    if (rst_adornment(t, s, e)) {
        Py_ssize_t nxt = after + 1;
        while (nxt < n && BLANK(AT(t, nxt)))
            nxt++;
        return nxt < n && AT(t, nxt) != '\n';
    }
    if (!is_heading(t, s, e))
        return 0;
    if (count_newlines(t, s, e) || md_heading(t, s, e))
        return 1;
    while (before > 0 && SPACE(AT(t, before - 1)))
        before--;
    while (after < n && SPACE(AT(t, after)))
        after++;
    return (before == 0 || count_newlines(t, before, s) >= 2) && (after == n || count_newlines(t, e, after) >= 2);
}

static int blank(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    for (; s < e; s++)
        if (!SPACE(AT(t, s)))
            return 0;
    return 1;
}

/* RecursiveChunker._glue_headings */
static int glue_headings(const Text *t, const Spans *pieces, Spans *glued) {
    Py_ssize_t pending = -1;
    for (Py_ssize_t k = 0; k < pieces->len; k++) {
        Py_ssize_t start = pieces->items[k].start, end = pieces->items[k].end;
        if (blank(t, start, end)) {
            if (pending < 0 && glued->len)
                glued->items[glued->len - 1].end = end;
            else if (pending < 0)
                pending = start;
            continue;
        }
        if (is_heading_piece(t, start, end)) {
            if (pending < 0)
                pending = start;
            continue;
        }
        if (push(glued, pending >= 0 ? pending : start, end) < 0)
            return -1;
        pending = -1;
    }
    if (pending >= 0) {
        Py_ssize_t last = pieces->items[pieces->len - 1].end;
        if (glued->len)
            glued->items[glued->len - 1].end = last;
        else if (push(glued, pending, last) < 0)
            return -1;
    }
    return 0;
}

/* -- packing: RecursiveChunker.chunk ----------------------------------------------------------- */

static int add_span(PyObject *list, const Text *t, Py_ssize_t start, Py_ssize_t end) {
    trim(t, &start, &end);
    if (end <= start)
        return 0;
    PyObject *pair = Py_BuildValue("(nn)", start, end);
    if (!pair)
        return -1;
    int rc = PyList_Append(list, pair);
    Py_DECREF(pair);
    return rc;
}

static PyObject *pack(const Text *t, const Spans *g) {
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    Py_ssize_t first = 0, last = 0; /* current: glued pieces [first, last) */
    for (Py_ssize_t k = 0; k < g->len; k++) {
        if (last > first && length(t, g->items[first].start, g->items[k].end) > t->size) {
            if (add_span(out, t, g->items[first].start, g->items[last - 1].end) < 0)
                goto fail;
            Py_ssize_t carried = last;
            for (Py_ssize_t p = last - 1; p >= first; p--) {
                if (length(t, g->items[p].start, g->items[last - 1].end) > t->overlap ||
                    length(t, g->items[p].start, g->items[k].end) > t->size)
                    break;
                carried = p;
            }
            first = carried;
        }
        last = k + 1;
    }
    if (last > first && add_span(out, t, g->items[first].start, g->items[last - 1].end) < 0)
        goto fail;
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *spans(PyObject *module, PyObject *args) {
    PyObject *text;
    Py_ssize_t size, overlap;
    if (!PyArg_ParseTuple(args, "Unn", &text, &size, &overlap))
        return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    if (size < 1 || overlap < 0 || overlap >= size) {
        PyErr_SetString(PyExc_ValueError, "need size >= 1 and 0 <= overlap < size");
        return NULL;
    }
    Text t = {text, PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), size, overlap};
    Py_ssize_t s = 0, e = t.n;
    trim(&t, &s, &e);
    if (e <= s)
        return PyList_New(0);
    if (e - s <= size)
        return Py_BuildValue("[(nn)]", s, e);
    Spans all = {0}, glued = {0};
    PyObject *out = NULL;
    if (pieces(&t, 0, t.n, 0, &all) < 0 || glue_headings(&t, &all, &glued) < 0)
        PyErr_NoMemory();
    else
        out = pack(&t, &glued);
    free(all.items);
    free(glued.items);
    return out;
}

static PyMethodDef methods[] = {
    {"spans", spans, METH_VARARGS, "spans(text, size, overlap) -> the recursive chunker's [start, end) offsets"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_recursive", NULL, -1, methods};

PyMODINIT_FUNC PyInit__recursive(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "SOURCE_SHA256", ASSAY_SOURCE_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
