/* libFuzzer target: the profile loader (cache/profile.c, ag_profile_load), which parses the
 * file named by AUTOGRAPH_PROFILE -- a file that may be stale, foreign, truncated or edited.
 *
 * Each input is written to a temporary file that AUTOGRAPH_PROFILE names (set once, picked up
 * through ag_options_reload()), then loaded. Besides the sanitizers' checks (ASan, UBSan, LSan
 * on what a load allocates), what was loaded must be well-formed (lengths within 2..4096, a
 * name for every node, no sequence longer than the engine can hold -- AUTOGRAPH_MAX_NODES, the
 * size of a stream's held array --, the count of trusted sequences published) and must survive a round
 * trip: saving it (ag_profile_save writes every loaded sequence, dropping repeats of the same
 * nodes) and loading the saved file gives the same sequences back.
 *
 * cache/profile.c is #included, not linked: its list of loaded sequences is static, and each
 * input must start from an empty one (and free it afterwards, or LSan would see it go).
 * The engine around it is not linked: no stream exists here (ag_streams_each below). */
#include "cache/profile.c"

ag_hot_t ag_hot; /* the engine's, defined in engine.c */

void ag_streams_each(void (*fn)(ag_stream *, void *), void *arg)
{
    (void)fn;
    (void)arg;
}

static char g_path[4096];

static void remove_files(void)
{
    char tmp[4200];
    unlink(g_path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", g_path, (long)getpid());
    unlink(tmp);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* each input is written, saved and read back: memory-backed /dev/shm is several times
     * faster than a disk-backed /tmp (TMPDIR wins when set) */
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_path, sizeof g_path, "%s/autograph-fuzz-profile.XXXXXX", dir);
    int fd = mkstemp(g_path);
    if (fd < 0) {
        perror("fuzz_profile: mkstemp");
        exit(1);
    }
    close(fd);
    atexit(remove_files);
    setenv("AUTOGRAPH_PROFILE", g_path, 1);
    setenv("AUTOGRAPH_LOG", "error", 1); /* no "malformed sequences" warning per input */
    /* a small engine, so that the seeds (2 and 3 nodes) and their mutations land on both sides
     * of what it can hold */
    setenv("AUTOGRAPH_MAX_NODES", "3", 1);
    return 0;
}

/* Takes the loaded list away from profile.c (which then has none). */
static ag_pseq *take_loaded(void)
{
    ag_pseq *list = g_seqs;
    g_seqs = NULL;
    atomic_store(&ag_hot.profile_live, 0);
    return list;
}

static void free_list(ag_pseq *q)
{
    while (q) {
        ag_pseq *next = q->next;
        free_seq(q);
        q = next;
    }
}

static int same_nodes(const ag_pseq *a, const ag_pseq *b)
{
    return a->len == b->len && !memcmp(a->nodes, b->nodes, a->len * sizeof *a->nodes);
}

static int same_seq(const ag_pseq *a, const ag_pseq *b)
{
    if (!same_nodes(a, b) || a->trusted != b->trusted || a->med_graph != b->med_graph ||
        a->med_eager != b->med_eager)
        return 0;
    for (uint32_t k = 0; k < a->len; k++)
        if (strcmp(a->names[k], b->names[k]))
            return 0;
    return 1;
}

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_profile: check failed: %s (line %d)\n", #cond, __LINE__);     \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

static int write_input(const uint8_t *data, size_t size)
{
    FILE *f = fopen(g_path, "w");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, size, f);
    return fclose(f) || w != size ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (write_input(data, size)) {
        perror("fuzz_profile: writing the input");
        abort();
    }
    ag_options_reload();
    CHECK(!strcmp(ag_opt_str(AG_OPT_PROFILE), g_path));

    ag_profile_load();

    /* well-formed, and the trusted ones are published */
    int trusted = 0;
    /* what the engine can hold (registry.c sizes each stream's held array so), not the
     * loader's own format limit */
    const uint32_t max_nodes = (uint32_t)ag_opt(AG_OPT_MAX_NODES);
    for (ag_pseq *q = g_seqs; q; q = q->next) {
        CHECK(q->len >= 2 && q->len <= max_nodes);
        CHECK(q->nodes && q->names);
        for (uint32_t k = 0; k < q->len; k++)
            CHECK(q->names[k] != NULL);
        trusted += q->trusted;
        if (q->trusted) {
            const ag_pseq *first = ag_profile_first(&q->nodes[0]);
            CHECK(first && first->trusted &&
                  !memcmp(&first->nodes[0], &q->nodes[0], sizeof *q->nodes));
        }
    }
    CHECK(ag_profile_active() == (trusted > 0));

    /* round trip: save what was loaded, load that again */
    ag_profile_save();
    ag_pseq *first = take_loaded();
    ag_profile_load();
    ag_pseq *again = take_loaded();

    const ag_pseq *b = again;
    for (const ag_pseq *a = first; a; a = a->next) {
        int repeat = 0; /* the saver writes a sequence of the same nodes only once */
        for (const ag_pseq *e = first; e != a && !repeat; e = e->next)
            repeat = same_nodes(e, a);
        if (repeat)
            continue;
        CHECK(b != NULL);
        CHECK(same_seq(a, b));
        b = b->next;
    }
    CHECK(b == NULL);

    free_list(first);
    free_list(again);
    return 0;
}
