package experiment

import (
	"strings"
	"testing"
)

// TestMarkdownEscapesNames: a name holding '|', a line break, <script>,
// '&' or a backtick (issue 45, item 8: they went into RESULTS.md raw)
// stays one cell of its table, opens no HTML tag and no code span, in
// every table that shows names.
func TestMarkdownEscapesNames(t *testing.T) {
	if got, want := MarkdownText("a|b\n<script>&`x`\\"), "a\\|b &lt;script&gt;&amp;\\`x\\`\\\\"; got != want {
		t.Errorf("MarkdownText = %q, want %q", got, want)
	}
	for in, want := range map[string]string{"a b": "`a b`", "a`b": "``a`b``", "`a``": "``` `a`` ```", "x\ny": "`x y`"} {
		if got := MarkdownCode(in); got != want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", in, got, want)
		}
	}
	name := "DEL | x\n<script>alert(1)</script> & `y`"
	var recs []Record
	for seed := range uint64(2) {
		recs = append(recs,
			Record{Key: "o", Kind: "oracle", ForgetSet: "iid|x", Seed: seed, Name: "Retrain (oracle)", Accuracy: map[string]float64{"forget": 0.8}},
			Record{Key: "r" + string(rune('0'+seed)), Kind: "run", ForgetSet: "iid|x", Seed: seed, Name: name, Strategy: "del", Algorithm: "rft<b>",
				Budget: 0.1, Accuracy: map[string]float64{"forget": 0.7}, Delta: map[string]float64{"forget": 0.1, "mia_confidence": 0.01},
				Flags: []string{"a|b"}, Stop: "<i>", Seconds: 1, OracleSeconds: 10},
			Record{Key: "f" + string(rune('0'+seed)), Kind: "run", ForgetSet: "iid|x", Seed: seed, Name: "FT|", Strategy: "full", Algorithm: "ft",
				Accuracy: map[string]float64{"forget": 0.7}, Delta: map[string]float64{"forget": 0.2, "mia_confidence": 0.01}, Seconds: 1, OracleSeconds: 10})
	}
	recs[0].Key, recs[3].Key = "o0", "o1"
	rows := Summarize(recs)
	md := Markdown(rows) + RankingMarkdown(rows) + VerdictMarkdown(recs, []string{name})
	if RankingMarkdown(rows) == "" || VerdictMarkdown(recs, []string{name}) == "" {
		t.Fatal("the ranking or the verdict table is empty: the test shows nothing")
	}
	if strings.Contains(md, "<script>") || strings.Contains(md, "<b>") || strings.Contains(md, "<i>") || strings.Contains(md, "`y`") {
		t.Errorf("a name went in raw:\n%s", md)
	}
	// Every table row has as many cells as its header.
	cells := func(line string) int { return strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") }
	head := 0
	for _, line := range strings.Split(md, "\n") {
		switch {
		case !strings.HasPrefix(line, "|"):
			head = 0
		case head == 0:
			head = cells(line)
		case cells(line) != head:
			t.Errorf("row with %d cell borders under a header of %d: %q", cells(line), head, line)
		}
	}
	if !strings.Contains(md, "DEL \\| x &lt;script&gt;alert(1)&lt;/script&gt; &amp; \\`y\\`") {
		t.Errorf("the name is not shown escaped:\n%s", md)
	}
}
