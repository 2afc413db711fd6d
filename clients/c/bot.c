/*
 * A Nap Arena bot in C, for the stdin/stdout bridge (docs/stdio-protocol.md).
 *
 *   cc -O2 -o bot bot.c
 *   NAP_REFEREE=host:port NAP_TOKEN=secret \
 *     python -m clients.stdio.bridge --decisions exchange,peep,widow -- ./bot
 *
 * Reads one JSON decision request per line on stdin and writes one reply line,
 * {"action":"QH"}, on stdout. Only the C standard library: a tiny JSON scanner finds the
 * few members it needs (it skips everything else, whatever the member order).
 *
 * The policy, a little better than random:
 *   - bidding: Three with three or more cards of one suit headed by its Ace, else pass;
 *   - leading: the highest card of the longest suit (the declarer leads trumps once the
 *     trump is known; its first lead so names its longest suit);
 *   - following: the lowest card that takes the trick, unless a fellow defender is
 *     already winning it; otherwise the lowest card, keeping trumps when it can;
 *   - in misere, always the lowest card;
 *   - the pool variants' decisions (the bridge's --decisions lists them): it declines
 *     them all: "exchange:none" in the exchange round, never "peep", "widow:none".
 * Whatever happens, the answer is one of the request's legal_actions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITEMS 64
#define MAX_TEXT 16

typedef struct {
    int count;
    char text[MAX_ITEMS][MAX_TEXT];
} Strings;

/* ---- the JSON scanner ------------------------------------------------------------- */

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Past the string starting at p (at its opening quote); copies up to size-1 chars to out. */
static const char *read_string(const char *p, char *out, size_t size) {
    size_t n = 0;
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            p++;
            if (!*p) return NULL;
            c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p; /* \uXXXX is kept as "uXXXX" */
        }
        if (out && n + 1 < size) out[n++] = c;
    }
    if (out && size) out[n] = '\0';
    return *p == '"' ? p + 1 : NULL;
}

/* Past the JSON value starting at p, or NULL if it is cut short. */
static const char *skip_value(const char *p) {
    int depth = 0;
    p = skip_space(p);
    if (*p == '"') return read_string(p, NULL, 0);
    if (*p != '{' && *p != '[') { /* a number, true, false or null */
        while (*p && !strchr(",}] \t\r\n", *p)) p++;
        return p;
    }
    for (; *p; p++) {
        if (*p == '"') {
            p = read_string(p, NULL, 0);
            if (!p) return NULL;
            p--; /* at the closing quote; the loop steps past it */
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

/* The value of member `key` of the object starting at obj ('{'), or NULL. */
static const char *member(const char *obj, const char *key) {
    char name[64];
    const char *p;
    if (!obj) return NULL;
    p = skip_space(obj);
    if (*p != '{') return NULL;
    p = skip_space(p + 1);
    while (*p == '"') {
        p = read_string(p, name, sizeof name);
        if (!p) return NULL;
        p = skip_space(p);
        if (*p != ':') return NULL;
        p = skip_space(p + 1);
        if (strcmp(name, key) == 0) return p;
        p = skip_value(p);
        if (!p) return NULL;
        p = skip_space(p);
        if (*p == ',') p = skip_space(p + 1);
    }
    return NULL;
}

static int is_null(const char *value) { return !value || strncmp(value, "null", 4) == 0; }

static int number(const char *value, int fallback) {
    return is_null(value) ? fallback : atoi(value);
}

static void string_value(const char *value, char *out, size_t size) {
    out[0] = '\0';
    if (value && *value == '"') read_string(value, out, size);
}

/* The strings of the array at value; with `field`, that member of each object instead. */
static void strings(const char *value, const char *field, Strings *out) {
    const char *p = value;
    out->count = 0;
    if (!p || *p != '[') return;
    p = skip_space(p + 1);
    while (p && *p && *p != ']' && out->count < MAX_ITEMS) {
        const char *item = field ? member(p, field) : p;
        string_value(item, out->text[out->count], MAX_TEXT);
        if (out->text[out->count][0]) out->count++;
        p = skip_value(p);
        if (!p) return;
        p = skip_space(p);
        if (*p == ',') p = skip_space(p + 1);
    }
}

/* ---- cards -------------------------------------------------------------------------- */

static int rank(const char *card) {
    switch (card[0]) {
    case 'A': return 14;
    case 'K': return 13;
    case 'Q': return 12;
    case 'J': return 11;
    default: return atoi(card);
    }
}

static char suit(const char *card) {
    size_t n = strlen(card);
    return n ? card[n - 1] : '?';
}

static int is_card(const char *text) {
    size_t n = strlen(text);
    return n >= 2 && n <= 3 && strchr("CDHS", text[n - 1]) && rank(text) >= 2 && rank(text) <= 14;
}

/* Whether `card` beats `best` in a trick whose winning card is `best`, `trump` 0 for none. */
static int beats(const char *card, const char *best, char trump) {
    if (suit(card) == suit(best)) return rank(card) > rank(best);
    return trump && suit(card) == trump;
}

static int count_suit(const Strings *cards, char s) {
    int i, n = 0;
    for (i = 0; i < cards->count; i++) n += suit(cards->text[i]) == s;
    return n;
}

/* What playing a card gives away: its rank, and a trump counts as more than any side card. */
static int cost(const char *card, char trump) { return rank(card) + (trump && suit(card) == trump ? 20 : 0); }

/* Index of the lowest (or highest) card of `cards` in suit s (any suit for 0), or -1. */
static int extreme(const Strings *cards, char s, int highest) {
    int i, found = -1;
    for (i = 0; i < cards->count; i++) {
        const char *c = cards->text[i];
        if (s && suit(c) != s) continue;
        if (found < 0 || (highest ? rank(c) > rank(cards->text[found])
                                  : rank(c) < rank(cards->text[found])))
            found = i;
    }
    return found;
}

/* ---- the policy --------------------------------------------------------------------- */

/* Whether `text` is one of `legal`. */
static int has(const Strings *legal, const char *text) {
    int i;
    for (i = 0; i < legal->count; i++)
        if (strcmp(legal->text[i], text) == 0) return 1;
    return 0;
}

static const char *choose_bid(const Strings *legal, const Strings *hand) {
    int i, can_three = 0, can_pass = 0;
    const char *suits = "CDHS";
    for (i = 0; i < legal->count; i++) {
        can_three |= strcmp(legal->text[i], "three") == 0;
        can_pass |= strcmp(legal->text[i], "pass") == 0;
    }
    for (i = 0; can_three && suits[i]; i++) {
        int ace = extreme(hand, suits[i], 1);
        if (count_suit(hand, suits[i]) >= 3 && ace >= 0 && rank(hand->text[ace]) == 14)
            return "three";
    }
    return can_pass ? "pass" : legal->text[0];
}

static const char *choose_card(const Strings *cards, const char *line, int seat) {
    const char *view = member(line, "view");
    const char *trick = member(view, "current_trick");
    int declarer = number(member(view, "declarer"), -1);
    char trump_text[8], contract[16];
    char trump;
    Strings played;
    const char *p;
    int seats[MAX_ITEMS];
    int i, best = 0, pick = -1, n;

    string_value(member(view, "trump"), trump_text, sizeof trump_text);
    string_value(member(view, "contract"), contract, sizeof contract);
    trump = trump_text[0];
    strings(is_null(trick) ? NULL : member(trick, "cards"), "card", &played);

    if (strcmp(contract, "misere") == 0) return cards->text[extreme(cards, 0, 0)];

    if (played.count == 0) { /* leading */
        char longest = suit(cards->text[0]);
        if (declarer == seat && trump && count_suit(cards, trump)) longest = trump;
        else
            for (i = 0; i < cards->count; i++)
                if (count_suit(cards, suit(cards->text[i])) > count_suit(cards, longest))
                    longest = suit(cards->text[i]);
        return cards->text[extreme(cards, longest, 1)];
    }

    /* who is winning the trick so far: the seats of the played cards, in order */
    p = member(trick, "cards");
    n = 0;
    if (p && *p == '[') {
        p = skip_space(p + 1);
        while (p && *p == '{' && n < MAX_ITEMS) {
            seats[n++] = number(member(p, "seat"), -1);
            p = skip_value(p);
            if (p) p = skip_space(p);
            if (p && *p == ',') p = skip_space(p + 1);
        }
    }
    for (i = 1; i < played.count; i++)
        if (beats(played.text[i], played.text[best], trump)) best = i;

    if (declarer == seat || best >= n || seats[best] == declarer) {
        /* try to take the trick, as cheaply as possible */
        for (i = 0; i < cards->count; i++)
            if (beats(cards->text[i], played.text[best], trump) &&
                (pick < 0 || cost(cards->text[i], trump) < cost(cards->text[pick], trump)))
                pick = i;
        if (pick >= 0) return cards->text[pick];
    }
    /* a fellow defender is winning, or nothing wins: the cheapest card */
    for (i = 0; i < cards->count; i++)
        if (pick < 0 || cost(cards->text[i], trump) < cost(cards->text[pick], trump)) pick = i;
    return cards->text[pick];
}

static const char *decide(const char *line) {
    static Strings legal, hand, cards;
    char phase[16];
    const char *view = member(line, "view");
    int seat = number(member(line, "seat"), -1);
    int i;

    strings(member(line, "legal_actions"), NULL, &legal);
    if (legal.count == 0) return NULL;
    string_value(member(view, "phase"), phase, sizeof phase);
    /* declining is always legal, and listed first: decline the exchange and the widow */
    if (strcmp(phase, "exchange") == 0) return has(&legal, "exchange:none") ? "exchange:none" : legal.text[0];
    if (strcmp(phase, "widow") == 0) return has(&legal, "widow:none") ? "widow:none" : legal.text[0];
    if (strcmp(phase, "bidding") == 0) { /* never "peep": choose_bid answers a bid */
        strings(member(view, "hand"), NULL, &hand);
        return choose_bid(&legal, &hand);
    }
    cards.count = 0;
    for (i = 0; i < legal.count; i++)
        if (is_card(legal.text[i])) memcpy(cards.text[cards.count++], legal.text[i], MAX_TEXT);
    if (cards.count == 0) return legal.text[0];
    return choose_card(&cards, line, seat);
}

/* ---- the loop ------------------------------------------------------------------------ */

/* One line of any length from stdin into *buffer (grown as needed); 0 at the end. */
static int read_line(char **buffer, size_t *size) {
    size_t used = 0;
    if (!*buffer) {
        *size = 8192;
        *buffer = malloc(*size);
        if (!*buffer) return 0;
    }
    for (;;) {
        if (!fgets(*buffer + used, (int)(*size - used), stdin)) return used > 0;
        used += strlen(*buffer + used);
        if (used && (*buffer)[used - 1] == '\n') return 1;
        if (used + 1 >= *size) {
            char *grown = realloc(*buffer, *size * 2);
            if (!grown) return 0;
            *buffer = grown;
            *size *= 2;
        }
    }
}

int main(void) {
    char *line = NULL;
    size_t size = 0;
    while (read_line(&line, &size)) {
        const char *action = decide(line);
        /* a request this bot cannot read gets an answer the referee records as a fault */
        printf("{\"action\":\"%s\"}\n", action ? action : "unreadable-request");
        fflush(stdout);
    }
    free(line);
    return 0;
}
