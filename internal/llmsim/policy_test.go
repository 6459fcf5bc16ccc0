package llmsim

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVocabularyDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range vocabulary {
		if seen[w] || w == "" || strings.ToLower(w) != w {
			t.Errorf("bad or repeated word %q", w)
		}
		seen[w] = true
	}
	if len(vocabulary) < 300 {
		t.Errorf("vocabulary has %d words; answers would overlap too much", len(vocabulary))
	}
}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		set[w] = true
	}
	return set
}

func jaccard(a, b string) float64 {
	sa, sb := wordSet(a), wordSet(b)
	inter := 0
	for w := range sa {
		if sb[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// The orchestrator rejects near-duplicate answers (Jaccard > 0.5 when strict);
// default answers must pass even with a long task quoted in each.
func TestDefaultAnswersAreNotNearDuplicates(t *testing.T) {
	task := "Compare the trade-offs between microservices and a modular monolith for a team of eight engineers building " +
		"a payments platform, considering deployment, observability, data consistency and onboarding cost over three years."
	req := func(model string) *chatRequest {
		return &chatRequest{Model: model, Messages: []chatMessage{{Role: "user",
			Content: textContent("<ORIGINAL MESSAGE> " + task + " <END OF ORIGINAL MESSAGE>\n<CURRENT ANSWERS from the agents>\n(no answers available yet)\n<END OF CURRENT ANSWERS>")}}}
	}
	var answers []string
	for _, m := range []string{"gpt-4o", "gpt-4o-mini", "claude", "a", "b"} {
		for n := 1; n <= 3; n++ {
			answers = append(answers, defaultAnswer(req(m), n))
		}
	}
	worst := 0.0
	for i := range answers {
		for j := i + 1; j < len(answers); j++ {
			if answers[i] == answers[j] {
				t.Fatalf("identical answers:\n%s", answers[i])
			}
			worst = max(worst, jaccard(answers[i], answers[j]))
		}
	}
	if worst > 0.5 {
		t.Errorf("worst Jaccard %.2f > 0.5", worst)
	}
	t.Logf("worst Jaccard %.2f; example: %s", worst, answers[0])
	if !strings.HasPrefix(answers[0], "[sim model gpt-4o] Answer 1 to: Compare the trade-offs") || !strings.Contains(answers[0], "...") {
		t.Errorf("answer = %q", answers[0])
	}
	if defaultAnswer(req("a"), 2) != defaultAnswer(req("a"), 2) {
		t.Error("not deterministic")
	}
}

func TestTaskExcerpt(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	got := taskExcerpt(&chatRequest{Messages: []chatMessage{{Role: "user", Content: textContent(long)}}})
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "...") || len(got) > taskExcerptLen+3 {
		t.Errorf("excerpt = %q", got)
	}
	got = taskExcerpt(&chatRequest{Messages: []chatMessage{
		{Role: "user", Content: "first"}, {Role: "assistant", Content: "x"},
		{Role: "user", Content: "intro\n<ORIGINAL MESSAGE>  What\n is  up? <END OF ORIGINAL MESSAGE> rest"},
	}})
	if got != "What is up?" {
		t.Errorf("excerpt = %q", got)
	}
}

func TestFindAnswer(t *testing.T) {
	cases := map[string]string{
		"VOTING RESULTS: ...\nAll answers provided during coordination:\nalice: \"A's answer\"\nbob (YOUR ANSWER): \"Bob's \"quoted\" answer\"\nPlease present.": `Bob's "quoted" answer`,
		"<CURRENT ANSWERS from the agents>\n<agent1> First answer. <end of agent1>\n<agent2> Second. <end of agent2>":                                            "First answer.",
		"<NEW ANSWERS>\n<agent3> Newer.\nTwo lines. </agent3>":                                                                                                   "Newer.\nTwo lines.",
		"no answers here <agent1> unterminated":                                                                                                                  "",
		"bob (YOUR ANSWER): \"last\"":                                                                                                                            "last",
	}
	for in, want := range cases {
		if got := findAnswer(in); got != want {
			t.Errorf("findAnswer(%q) = %q, want %q", in, got, want)
		}
	}
	req := &chatRequest{Model: "m", Messages: []chatMessage{{Role: "user", Content: "<agent1> The winner. <end of agent1>"}}}
	if got := finalText(req, ""); got != "[sim model m] Final answer: The winner." {
		t.Errorf("finalText = %q", got)
	}
	if got := finalText(req, "scripted"); got != "scripted" {
		t.Errorf("finalText = %q", got)
	}
}

func TestTokenizer(t *testing.T) {
	for _, s := range []string{"", " ", "Hello, world!", "  leading and trailing  ", "naïve café ünïcödé 日本語のテキスト",
		`{"content":"a \"quoted\" value"}`, "line\nbreaks\n\nand\ttabs", strings.Repeat("x", 37)} {
		var parts []string
		for i := 0; i < len(s); {
			j := nextToken(s, i)
			if j <= i {
				t.Fatalf("%q: no progress at %d", s, i)
			}
			if !utf8.ValidString(s[i:j]) {
				t.Errorf("%q: token %q splits a rune", s, s[i:j])
			}
			parts = append(parts, s[i:j])
			i = j
		}
		if strings.Join(parts, "") != s || len(parts) != countTokens(s) {
			t.Errorf("%q: tokens %q", s, parts)
		}
	}
	if n := countTokens("The quick brown fox jumps over the lazy dog."); n < 9 || n > 14 {
		t.Errorf("%d tokens for a 44-character sentence", n)
	}
}

func TestAppendEscapedMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " backslash \ slash /`, "ctl \x00\x01\x1f\x7f nl\n cr\r tab\t",
		"html <b>&amp;</b>", "unicode é 日本 🎉", "seps \u2028 \u2029", "bad \xff\xfe utf8 \xe2\x82"} {
		got := `"` + string(appendEscaped(nil, s)) + `"`
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%q: invalid JSON %s: %v", s, got, err)
			continue
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q: round trip %q, encoding/json %q", s, back, wantBack)
		}
	}
}

func TestMalformedArguments(t *testing.T) {
	a := malformedArguments("hello")
	if a != `{"content":"hello` || json.Valid([]byte(a)) {
		t.Errorf("malformed = %s", a)
	}
}
