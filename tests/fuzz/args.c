/* The fuzz's argument vectors and what their parse must keep: command lines
 * of the tool's own words (the real option table, commands, variant names
 * from the registry, values of each option's kind), valid lines mutated,
 * and random words; then pgc_parse_args (src/cli/args.c) on each, held to
 * what src/cli/args.h promises (check_args). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "common.h"
#include "introspect.h"
#include "trace_records.h" /* PG_TRACE_MAX_BLOCKS, --blocks' bound */

/* ---- argument vectors ---------------------------------------------------- */

static const char *const commands[] = {"list", "bench", "study", "profile", "inspect",
                                       "trace", "pipelining", "single-warp"};
static const char *const odd_options[] = {"-h", "--", "-", "---", "--=", "-x", "--size=",
                                          "--Size", "--siz", "--help=1", "--version=",
                                          "--quiet=on", "--check=", "=", "--variant==all"};
const char *const fuzz_numbers[] = {
    "0", "1", "2", "3", "4", "8", "31", "32", "33", "63", "64", "65", "100", "1023", "1024",
    "1025", "65536", "1000000", "1000001", "16777216", "16777217", "2147483646",
    "2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "99999999999999999999999999999999", "-1", "-0", "-2147483648", "-2147483649", "007",
    "+5", " 5", "5 ", "1e3", "0x10", "3.5", "", "1,2", "\xd9\xa3" /* an Arabic-Indic 3 */};
const size_t fuzz_numbers_count = sizeof fuzz_numbers / sizeof fuzz_numbers[0];
static const char *const stage_lists[] = {
    "1-8", "1-3,6", "2,3,4", "0-2", "3-1", "1-64", "1-65", "2-65", "64-127",
    "2147483646-2147483647", "2147483647-2147483648", "1-2147483647", "2147483648",
    "4294967297", ",", "1,", ",1", "1,,2", "-", "1-", "-3", "5-5", "1-2-3", "1--2", "0",
    "1,1,1", "4,3,2,1", "1-4,2-5,3-6", "99999999999999999999-1", "1-99999999999999999999",
    " 2", "2 ", "2,3 ,4"};
static const char *const words_of_values[] = {
    "all", "all,baseline", "baseline,all", "table", "csv", "json", "JSON", "on", "off",
    "ON", "uniform", "wide", "tiny", "bench/shapes/set.txt", "/dev/null", "x", "cp_async=baseline",
    "=baseline", "cp_async=", "=", "cp_async==baseline", "nonesuch=baseline",
    "baseline=nonesuch", "a,b", ",", ",,", "baseline,", ",baseline", "pipelining",
    "single-warp", "--", "-", "--size", "t.json"};

/* --op's values and a shape line's op words: lists, and some a little off. */
const char *const fuzz_op_words[] = {"NN", "NT", "TN", "TT", "NN,NT", "TT,NN,TT",
                                       "NN,NT,TN,TT", "nt", "NX", "NN,", ",NN", "NNT",
                                       "N", "", "NN,,NT", "T T"};
const size_t fuzz_op_words_count = sizeof fuzz_op_words / sizeof fuzz_op_words[0];

/* A variant name from the registry, or one a little off it. */
static void variant_word(rng *r, buffer *b) {
  int count = pg_variant_count();
  const pg_variant_info *v = count > 0 ? pg_variant_at((int)below(r, (size_t)count)) : NULL;
  const char *name = v ? v->name : "baseline";
  switch (below(r, 10)) {
    case 0: puts_b(b, name); put(b, "x", 1); break;
    case 1: put(b, name, strlen(name) > 1 ? strlen(name) - 1 : 0); break;
    case 2: { /* names of 62 to 65 bytes: the parser's copy holds 63 */
      size_t len = 62 + below(r, 4);
      for (size_t i = 0; i < len; ++i) put(b, "a", 1);
      break;
    }
    default: puts_b(b, name);
  }
}

static void variant_list(rng *r, buffer *b) {
  size_t names = 1 + (chance(r, 20) ? below(r, 90) : below(r, 4));
  for (size_t i = 0; i < names; ++i) {
    if (i) put(b, ",", 1);
    if (chance(r, 3)) puts_b(b, "all");
    else variant_word(r, b);
  }
}

static void any_value(rng *r, buffer *b) {
  switch (below(r, 9)) {
    case 0: case 1: puts_b(b, PICK(r, fuzz_numbers)); break;
    case 2: puts_b(b, PICK(r, stage_lists)); break;
    case 3: { /* a stage list of many entries */
      size_t n = 1 + below(r, 80);
      for (size_t i = 0; i < n; ++i) putf(b, i ? ",%zu" : "%zu", 1 + below(r, 100));
      break;
    }
    case 4: variant_list(r, b); break;
    case 5: { /* --swap A=B from registry names */
      variant_word(r, b);
      put(b, "=", 1);
      variant_word(r, b);
      break;
    }
    case 6: puts_b(b, PICK(r, words_of_values)); break;
    case 7: random_bytes(r, b, below(r, 24), 0); break;
    default: random_bytes(r, b, chance(r, 5) ? LONG_WORD : below(r, 1500), 0); break;
  }
}

static void add_word(words *w, const char *s, size_t len) {
  if (w->argc >= MAX_WORDS) return;
  w->argv[w->argc++] = dup_bytes(s, len);
}

static void option_word(rng *r, buffer *b) {
  if (chance(r, 90)) puts_b(b, pgc_option_name((int)below(r, (size_t)pgc_option_count())));
  else puts_b(b, PICK(r, odd_options));
}

/* A value of the kind the option takes, mostly near what it accepts. */
static void typed_value(rng *r, buffer *b, const char *option) {
  static const char *const counts[] = {"--size",   "--m",      "--n",        "--k",
                                       "--warmup", "--iters",  "--rounds",   "--device",
                                       "--blocks", "--seed",   "--batch",    "--stride-a",
                                       "--stride-b", "--stride-c"};
  static const char *const small[] = {"0", "1", "2", "3", "7", "32", "64", "100", "1000", "1024"};
  static const char *const formats[] = {"table", "csv", "json"};
  static const char *const on_off[] = {"on", "off"};
  static const char *const inputs[] = {"uniform", "wide", "tiny"};
  static const char *const paths[] = {"bench/shapes/set.txt", "t.json", "/dev/null", "./x",
                                      "raw.txt", "/usr/bin/ncu"};
  if (chance(r, 10)) {
    any_value(r, b);
    return;
  }
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i)
    if (strcmp(option, counts[i]) == 0) {
      puts_b(b, chance(r, 60) ? PICK(r, small) : PICK(r, fuzz_numbers));
      return;
    }
  if (strcmp(option, "--stages") == 0) {
    if (chance(r, 50)) putf(b, "%zu", 1 + below(r, 8));
    else puts_b(b, PICK(r, stage_lists));
  } else if (strcmp(option, "--variant") == 0) {
    if (chance(r, 10)) puts_b(b, "all");
    else variant_list(r, b);
  } else if (strcmp(option, "--swap") == 0) {
    variant_word(r, b);
    put(b, "=", 1);
    variant_word(r, b);
  } else if (strcmp(option, "--format") == 0) {
    puts_b(b, PICK(r, formats));
  } else if (strcmp(option, "--check") == 0 || strcmp(option, "--flush-l2") == 0) {
    puts_b(b, PICK(r, on_off));
  } else if (strcmp(option, "--inputs") == 0) {
    puts_b(b, PICK(r, inputs));
  } else if (strcmp(option, "--op") == 0) {
    puts_b(b, PICK(r, fuzz_op_words));
  } else {
    puts_b(b, PICK(r, paths));
  }
}

/* Whether the option (by index) takes a value for this command: inspect's
 * --check is a flag, bench's takes on|off. */
static int takes_value(int index, pgc_command command) {
  const char *name = pgc_option_name(index);
  static const char *const flags[] = {"--help", "--version", "--quiet", "--profile", "--long"};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i)
    if (strcmp(name, flags[i]) == 0) return 0;
  return !(strcmp(name, "--check") == 0 && command == PGC_CMD_INSPECT);
}

/* A command line of the tool's own words: a command, then mostly the
 * options it takes with values of their kind, joined or apart; some values
 * missing, some options of other commands, some words stray. */
static void make_structured(rng *r, words *w) {
  buffer b = {0};
  pgc_command command = PGC_CMD_NONE;
  pgc_study study = PGC_STUDY_NONE;
  add_word(w, "pipegemm", 8);
  if (chance(r, 90)) {
    command = (pgc_command)(PGC_CMD_LIST + (int)below(r, PGC_CMD_TRACE - PGC_CMD_LIST + 1));
    const char *name = pgc_command_name(command);
    add_word(w, name, strlen(name));
    if (command == PGC_CMD_STUDY && chance(r, 90)) {
      study = chance(r, 50) ? PGC_STUDY_PIPELINING : PGC_STUDY_SINGLE_WARP;
      add_word(w, pgc_study_name(study), strlen(pgc_study_name(study)));
    }
  } else if (chance(r, 50)) {
    option_word(r, &b);
    add_word(w, b.text, b.len);
  }
  size_t items = chance(r, 70) ? below(r, 6) : below(r, 14);
  for (size_t i = 0; i < items; ++i) {
    b.len = 0;
    if (chance(r, 8)) { /* a stray word or value, or "--" and random bytes */
      if (chance(r, 30)) {
        puts_b(&b, PICK(r, commands));
      } else if (chance(r, 50)) {
        any_value(r, &b);
      } else {
        puts_b(&b, "--");
        random_bytes(r, &b, below(r, 16), 0);
      }
      add_word(w, b.text, b.len);
      continue;
    }
    int option = (int)below(r, (size_t)pgc_option_count());
    for (int tries = 0; tries < 20 && chance(r, 90); ++tries) {
      int fits = command == PGC_CMD_STUDY && study != PGC_STUDY_NONE
                     ? pgc_option_applies_to_study(option, study)
                     : pgc_option_applies(option, command);
      if (fits && strcmp(pgc_option_name(option), "--help") != 0) break;
      option = (int)below(r, (size_t)pgc_option_count());
    }
    const char *name = chance(r, 97) ? pgc_option_name(option) : PICK(r, odd_options);
    if (!takes_value(option, command) || chance(r, 3)) { /* a flag, or a value missing */
      add_word(w, name, strlen(name));
    } else if (chance(r, 50)) { /* --option value */
      add_word(w, name, strlen(name));
      typed_value(r, &b, name);
      add_word(w, b.text, b.len);
    } else { /* --option=value */
      puts_b(&b, name);
      put(&b, "=", 1);
      typed_value(r, &b, name);
      add_word(w, b.text, b.len);
    }
  }
  free(b.text);
}

/* Valid command lines, to mutate. */
static const char *const valid_lines[] = {
    "bench",
    "bench --size 2048",
    "bench --variant cp_async,pingpong --stages 2,3,4 --size=1024",
    "bench --shapes bench/shapes/set.txt --variant cublas,auto --warmup 1 --iters 1",
    "bench --m 1000 --n 8 --k 4096 --format csv --quiet",
    "bench --rounds 3 --warmup 1 --iters 2 --inputs wide --seed 18446744073709551615 "
    "--flush-l2 off --check off --device 0",
    "bench --variant all --stages 1-8",
    "study pipelining --size 256 --profile --ncu /usr/bin/ncu --raw raw.txt",
    "study single-warp --k 4096 --warmup 1 --iters 1 --format json",
    "profile --variant baseline,pingpong,cp_async --stages 1-3 --m 64 --n 32 --k 16",
    "inspect --variant cp_async --check --swap cp_async=baseline --binary ./pipegemm",
    "trace --variant cp_async --stages 3 --size 200 --blocks 3 --out t.json",
    "trace --variant mbarrier --m 1 --n 1 --k 0 --out=t.json --blocks=1024",
    "list --format json --device 1",
    "list --long --device 0",
    "--help",
    "--version",
    "bench --help",
    "study --help"};

static void split_line(const char *line, words *w) {
  add_word(w, "pipegemm", 8);
  for (const char *p = line; *p;) {
    while (*p == ' ') ++p;
    const char *end = strchr(p, ' ');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len) add_word(w, p, len);
    p += len;
  }
}

/* s may be the word itself (cut short). */
static void replace_word(words *w, int i, const char *s, size_t len) {
  char *word = dup_bytes(s, len);
  free(w->argv[i]);
  w->argv[i] = word;
}

/* A valid line with one to four changes: a word dropped, repeated, swapped
 * with the next, replaced, cut short, or a byte of it changed. */
static void make_mutated(rng *r, words *w) {
  split_line(PICK(r, valid_lines), w);
  size_t changes = 1 + below(r, 4);
  buffer b = {0};
  for (size_t c = 0; c < changes && w->argc > 1; ++c) {
    int i = 1 + (int)below(r, (size_t)w->argc - 1);
    size_t len = strlen(w->argv[i]);
    b.len = 0;
    switch (below(r, 8)) {
      case 0: /* drop */
        free(w->argv[i]);
        memmove(&w->argv[i], &w->argv[i + 1], (size_t)(w->argc - i - 1) * sizeof(char *));
        --w->argc;
        break;
      case 1: add_word(w, w->argv[i], len); break;
      case 2:
        if (i + 1 < w->argc) {
          char *t = w->argv[i];
          w->argv[i] = w->argv[i + 1];
          w->argv[i + 1] = t;
        }
        break;
      case 3:
        any_value(r, &b);
        replace_word(w, i, b.text, b.len);
        break;
      case 4:
        option_word(r, &b);
        replace_word(w, i, b.text, b.len);
        break;
      case 5: replace_word(w, i, w->argv[i], below(r, len + 1)); break;
      case 6: { /* one byte changed or put in */
        put(&b, w->argv[i], len);
        char byte = (char)(1 + below(r, 255));
        size_t at = below(r, len + 1);
        if (at < len && chance(r, 50)) b.text[at] = byte;
        else {
          put(&b, "", 1);
          memmove(b.text + at + 1, b.text + at, len - at);
          b.text[at] = byte;
        }
        replace_word(w, i, b.text, b.len);
        break;
      }
      default: /* a value joined with '=' */
        put(&b, w->argv[i], len);
        put(&b, "=", 1);
        any_value(r, &b);
        replace_word(w, i, b.text, b.len);
        break;
    }
  }
  free(b.text);
}

static void make_random(rng *r, words *w) {
  buffer b = {0};
  int argc = (int)below(r, 10);
  for (int i = 0; i < argc; ++i) {
    b.len = 0;
    random_bytes(r, &b, below(r, 40), 0);
    add_word(w, b.text, b.len);
  }
  free(b.text);
}

void make_words(rng *r, words *w) {
  memset(w, 0, sizeof *w);
  size_t kind = below(r, 100);
  if (kind < 55) make_structured(r, w);
  else if (kind < 90) make_mutated(r, w);
  else make_random(r, w);
  w->argv[w->argc] = NULL;
  for (int i = 0; i < w->argc; ++i) w->saved[i] = dup_bytes(w->argv[i], strlen(w->argv[i]));
}

void free_words(words *w) {
  for (int i = 0; i < w->argc; ++i) {
    free(w->argv[i]);
    free(w->saved[i]);
  }
}

void print_words(FILE *out, const words *w) {
  fprintf(out, "argv (%d words):", w->argc);
  for (int i = 0; i < w->argc; ++i) {
    fputc(' ', out);
    print_escaped(out, w->saved[i], strlen(w->saved[i]), 200);
  }
  fputc('\n', out);
}

/* ---- what a parse of arguments must keep -------------------------------- */

/* Whether p points into one of the words (a borrowed value). */
static int in_argv(const words *w, const char *p) {
  for (int i = 0; i < w->argc; ++i) {
    const char *word = w->argv[i];
    if (p >= word && p <= word + strlen(word)) return 1;
  }
  return 0;
}

static int borrowed(const words *w, const char *p, const char *what) {
  if (p == NULL) return 1;
  if (!in_argv(w, p)) return broken("%s does not point into argv", what);
  if (p[0] == '\0') return broken("%s is empty", what);
  return 1;
}

static pgc_command command_named(const words *w) {
  if (w->argc < 2 || w->argv[1][0] == '-') return PGC_CMD_NONE;
  for (int c = PGC_CMD_LIST; c <= PGC_CMD_TRACE; ++c)
    if (strcmp(w->argv[1], pgc_command_name((pgc_command)c)) == 0) return (pgc_command)c;
  return PGC_CMD_NONE;
}

static int in_range(long long v, long long lo, long long hi, const char *what) {
  if (v < lo || v > hi) return broken("%s = %lld, outside %lld..%lld", what, v, lo, hi);
  return 1;
}

/* The options of a successful parse, against args.h. */
static int check_options(const words *w, const pgc_options *o) {
  if (o->argc != w->argc || o->argv != w->argv) return broken("argc/argv not kept");
  if (o->command == PGC_CMD_HELP)
    return o->help_topic == PGC_CMD_NONE ||
                   (o->help_topic >= PGC_CMD_LIST && o->help_topic <= PGC_CMD_TRACE)
               ? 1
               : broken("help for command %d", (int)o->help_topic);
  if (o->command == PGC_CMD_VERSION) return 1;
  if (o->command < PGC_CMD_LIST || o->command > PGC_CMD_TRACE)
    return broken("success with command %d", (int)o->command);
  if (o->command != command_named(w))
    return broken("command %d, argv[1] names another", (int)o->command);
  if (o->format != PGC_FORMAT_TABLE && o->format != PGC_FORMAT_CSV && o->format != PGC_FORMAT_JSON)
    return broken("format %d", (int)o->format);
  int flags[] = {o->quiet, o->check, o->flush_l2, o->profile, o->inspect_check, o->all_variants};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i)
    if (flags[i] != 0 && flags[i] != 1) return broken("flag %zu is %d", i, flags[i]);
  if (!in_range(o->device, 0, INT_MAX, "device") || !in_range(o->m, 0, INT_MAX, "m") ||
      !in_range(o->n, 0, INT_MAX, "n") || !in_range(o->k, 0, INT_MAX, "k") ||
      !in_range(o->warmup, 0, PGC_MAX_REPEATS, "warmup") ||
      !in_range(o->iters, 1, PGC_MAX_REPEATS, "iters") ||
      !in_range(o->rounds, 1, PGC_MAX_ROUNDS, "rounds") ||
      !in_range(o->trace_blocks, 1, PG_TRACE_MAX_BLOCKS, "trace_blocks") ||
      !in_range(o->variant_count, 0, PGC_MAX_VARIANTS, "variant_count") ||
      !in_range(o->stage_count, 0, PGC_MAX_STAGE_COUNTS, "stage_count"))
    return 0;
  if (o->inputs < 0 || pgc_inputs_name(o->inputs) == NULL) return broken("inputs %d", o->inputs);
  if (o->all_variants != (o->variant_count == 0))
    return broken("all_variants %d with %d variants", o->all_variants, o->variant_count);
  for (int i = 0; i < o->variant_count; ++i) {
    const pg_variant_info *v = o->variants[i];
    if (v == NULL || pg_variant_find(v->name) != v)
      return broken("variant %d is no registry entry", i);
    for (int j = 0; j < i; ++j)
      if (o->variants[j] == v) return broken("variant %s twice", v->name);
  }
  for (int i = 0; i < o->stage_count; ++i) {
    if (o->stages[i] < 1) return broken("stage count %d", o->stages[i]);
    for (int j = 0; j < i; ++j)
      if (o->stages[j] == o->stages[i]) return broken("stage count %d twice", o->stages[i]);
  }
  /* A variant named with --variant takes every stage count asked for. */
  if (o->command == PGC_CMD_BENCH || o->command == PGC_CMD_PROFILE ||
      o->command == PGC_CMD_TRACE)
    for (int i = 0; i < o->variant_count; ++i) {
      const pg_variant_info *v = o->variants[i];
      if (v->min_stages == v->max_stages) continue;
      for (int s = 0; s < o->stage_count; ++s)
        if (o->stages[s] < v->min_stages || o->stages[s] > v->max_stages)
          return broken("%s at %d stages, outside %d-%d", v->name, o->stages[s],
                        v->min_stages, v->max_stages);
    }
  if (o->command == PGC_CMD_TRACE) {
    if (o->variant_count != 1 || !pg_variant_traced(o->variants[0]))
      return broken("trace without one traced variant");
    if (o->stage_count > 1 || o->out_path == NULL || o->m < 1 || o->n < 1)
      return broken("trace with %d stage counts, out %p, %dx%d", o->stage_count,
                    (const void *)o->out_path, o->m, o->n);
  }
  if (o->command == PGC_CMD_STUDY) {
    if (o->study != PGC_STUDY_PIPELINING && o->study != PGC_STUDY_SINGLE_WARP)
      return broken("study %d", (int)o->study);
    if (o->study == PGC_STUDY_SINGLE_WARP &&
        (o->m != PG_SINGLE_WARP_DIM || o->n != PG_SINGLE_WARP_DIM || o->k > PGC_SINGLE_WARP_MAX_K))
      return broken("single-warp at %dx%dx%d", o->m, o->n, o->k);
    if (!o->profile && (o->ncu_path || o->raw_path))
      return broken("--ncu or --raw without --profile");
  } else if (o->study != PGC_STUDY_NONE) {
    return broken("an experiment outside study");
  }
  if (o->shapes_path && o->command != PGC_CMD_BENCH) return broken("--shapes outside bench");
  /* The layouts: one to four op combinations, each once; a batch of one
   * GEMM at least; strides dense or counts; for bench's one shape, a
   * stride only with a batch, and the Cs apart (args.h). */
  const pgc_layout_request *l = &o->layout;
  if (l->op_count < 1 || l->op_count > PGC_OP_COUNT) return broken("%d ops", l->op_count);
  for (int i = 0; i < l->op_count; ++i) {
    if (l->ops[i] < 0 || l->ops[i] >= PGC_OP_COUNT) return broken("op %d", l->ops[i]);
    for (int j = 0; j < i; ++j)
      if (l->ops[j] == l->ops[i]) return broken("op %s twice", pgc_op_name(l->ops[i]));
  }
  if (l->batch < 1) return broken("batch %d", l->batch);
  const long long strides[3] = {l->stride_a, l->stride_b, l->stride_c};
  for (int i = 0; i < 3; ++i) {
    if (strides[i] < 0 && strides[i] != PGC_STRIDE_DENSE) return broken("stride %lld", strides[i]);
    if (o->command != PGC_CMD_BENCH && strides[i] != PGC_STRIDE_DENSE)
      return broken("a stride outside bench");
    if (o->command == PGC_CMD_BENCH && !o->shapes_path && strides[i] != PGC_STRIDE_DENSE &&
        l->batch < 2)
      return broken("a stride of one GEMM");
  }
  if (o->command == PGC_CMD_BENCH && !o->shapes_path && l->batch > 1 &&
      l->stride_c != PGC_STRIDE_DENSE && o->m > 0 && o->n > 0 &&
      l->stride_c < (long long)o->m * o->n)
    return broken("stride_c %lld below %dx%d", l->stride_c, o->m, o->n);
  if (o->command != PGC_CMD_BENCH && (l->op_count != 1 || l->ops[0] != 0 || l->batch != 1))
    return broken("a layout outside bench");
  if (o->long_listing != 0 && (o->long_listing != 1 || o->command != PGC_CMD_LIST))
    return broken("long_listing %d outside list", o->long_listing);
  if ((o->swap_claim == NULL) != (o->swap_kernels == NULL)) return broken("half a --swap");
  if (o->swap_claim && (pg_variant_find(o->swap_claim->name) != o->swap_claim ||
                        pg_variant_find(o->swap_kernels->name) != o->swap_kernels))
    return broken("--swap names no registry entry");
  return borrowed(w, o->shapes_path, "shapes_path") && borrowed(w, o->ncu_path, "ncu_path") &&
         borrowed(w, o->raw_path, "raw_path") && borrowed(w, o->inspect_binary, "inspect_binary") &&
         borrowed(w, o->out_path, "out_path");
}

/* The runs the options expand to, and the command line as text. */
static int check_plan(const pgc_options *o) {
  if (o->command < PGC_CMD_LIST || o->command > PGC_CMD_TRACE) return 1;
  int count = pgc_expand_runs(o, NULL, 0);
  if (count < 0) return broken("pgc_expand_runs gave %d", count);
  pgc_run_spec *runs = checked_alloc((size_t)count * sizeof *runs);
  int again = pgc_expand_runs(o, runs, count);
  int ok = again == count ? 1 : broken("pgc_expand_runs gave %d, then %d", count, again);
  for (int i = 0; ok && i < count; ++i) {
    const pg_variant_info *v = runs[i].variant;
    if (v == NULL) ok = broken("run %d without a variant", i);
    else if (runs[i].stages < v->min_stages || runs[i].stages > v->max_stages)
      ok = broken("run %d: %s at %d stages, outside %d-%d", i, v->name, runs[i].stages,
                  v->min_stages, v->max_stages);
  }
  free(runs);
  static const size_t sizes[] = {1, 2, 9, 64, PGC_COMMAND_LINE_SIZE};
  for (size_t s = 0; ok && s < sizeof sizes / sizeof sizes[0]; ++s) {
    char *text = checked_alloc(sizes[s]);
    pgc_command_line_text(o, text, sizes[s]);
    if (strnlen(text, sizes[s]) == sizes[s])
      ok = broken("command line text not terminated in %zu", sizes[s]);
    free(text);
  }
  return ok;
}

int check_args(rng *r, const words *w, tally *t) {
  pgc_options o, again;
  char err[PGC_ERROR_SIZE], err_again[PGC_ERROR_SIZE];
  int rc = pgc_parse_args(w->argc, (char **)w->argv, &o, err, sizeof err);
  for (int i = 0; i < w->argc; ++i)
    if (strcmp(w->argv[i], w->saved[i]) != 0) return broken("argv[%d] changed", i);
  if (rc != PGC_EXIT_OK && rc != PGC_EXIT_USAGE) return broken("pgc_parse_args returned %d", rc);
  int rc_again = pgc_parse_args(w->argc, (char **)w->argv, &again, err_again, sizeof err_again);
  if (rc_again != rc) return broken("a second parse returned %d, the first %d", rc_again, rc);
  if (rc == PGC_EXIT_OK) {
    ++t->args_parsed;
    return check_options(w, &o) && check_plan(&o);
  }

  if (!one_line(err, sizeof err, "pgc_parse_args")) return 0;
  if (strcmp(err, err_again) != 0) return broken("a second parse told another message");
  if (o.command != command_named(w))
    return broken("a failure left command %d, argv[1] names %d", (int)o.command,
                  (int)command_named(w));
  /* args.h: "A caller buffer this large holds any message". */
  char *big = checked_alloc(BIG_ERROR);
  pgc_parse_args(w->argc, (char **)w->argv, &again, big, BIG_ERROR);
  size_t big_len = strlen(big);
  free(big);
  if (big_len >= PGC_ERROR_SIZE)
    return broken("a message of %zu bytes, past PGC_ERROR_SIZE (%d)", big_len, PGC_ERROR_SIZE);
  /* A buffer too small for the message: cut short, terminated, no byte
   * written past it (the sanitizer sees that). */
  size_t small = 1 + below(r, 40);
  char *cut = checked_alloc(small);
  pgc_parse_args(w->argc, (char **)w->argv, &again, cut, small);
  int ok = strnlen(cut, small) < small ? 1 : broken("a message not terminated in %zu bytes", small);
  if (ok && strncmp(cut, err, small - 1) != 0) ok = broken("a message cut short differs");
  free(cut);
  return ok;
}
