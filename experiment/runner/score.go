package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval/score"
	"github.com/unlearn-tool/unlearn/experiment"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn"
	"github.com/unlearn-tool/unlearn/unlearn/scoring"
)

// scoreTarget is a forget set of the score's seed, as the grid drew it.
type scoreTarget struct {
	fs       forgetSet
	seed     uint64
	orig     string
	needOrig func() error
	okey     string
	idsKey   string
	origRef  string
}

// scoreAudit is one scored row: its folders under out/score/ and its
// score.json once gathered.
type scoreAudit struct {
	forgetSet, method string
	dir, oracles      string
}

// scoreDirs names a scored row's folders: out/score/<forget set>-seed<s>/
// holds oracles-<key> (shared by the rows) and <row>-<key>, keyed like the
// grid's records (the row's run key, K, the samples), so that a changed
// row or default audits afresh instead of clashing with an old folder.
func (r *state) scoreDirs(t scoreTarget, m experiment.Method, budget float64) scoreAudit {
	sc := r.cfg.Score
	base := filepath.Join(r.cfg.Out, "score", fmt.Sprintf("%s-seed%d", experiment.FileName(t.fs.Name), t.seed))
	runKey := r.runKey(m, budget, t.seed, t.idsKey, t.origRef, t.okey)
	return scoreAudit{forgetSet: t.fs.Name, method: m.Name,
		oracles: filepath.Join(base, "oracles-"+experiment.Key("score-oracles", t.okey, sc.OracleSeed, sc.RetainSample,
			sc.TestSample)),
		dir: filepath.Join(base, experiment.FileName(m.Name)+"-"+experiment.Key("score", runKey, sc.K, sc.RetainSample,
			sc.TestSample))}
}

// scoreAll audits every scored row on every scored forget set (after the
// grid; with dryRun, lists them), through the library as `unlearn score`
// does: the row's choices as the grid runs them, the grid's training
// recipe for the oracles.
func (r *state) scoreAll(ctx context.Context) error {
	sc := r.cfg.Score
	if sc == nil {
		return nil
	}
	r.audits = nil
	for _, t := range r.scoreTargets {
		for _, name := range sc.Methods {
			i := slices.IndexFunc(r.cfg.Methods, func(m experiment.Method) bool { return m.Name == name })
			m := r.cfg.Methods[i]
			budget := 0.0
			if len(m.Budgets) == 1 {
				budget = m.Budgets[0]
			}
			a := r.scoreDirs(t, m, budget)
			r.audits = append(r.audits, a)
			what := fmt.Sprintf("score of %s on %s (seed %d, K = %d)", m.Name, t.fs.Name, t.seed, sc.K)
			if _, err := os.Stat(filepath.Join(a.dir, "score.json")); err == nil {
				r.say(what, "cached", "")
				continue
			}
			if r.dryRun {
				r.say(what, "to run", "")
				continue
			}
			if err := r.scoreOne(ctx, t, m, budget, a, what); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *state) scoreOne(ctx context.Context, t scoreTarget, m experiment.Method, budget float64, a scoreAudit,
	what string) error {
	sc := r.cfg.Score
	ch, err := Choose(m, budget)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := t.needOrig(); err != nil {
		return err
	}
	if err := r.setup(); err != nil {
		return err
	}
	// The audit's folders are outputs: neither a link nor inside the
	// dataset, and their entries are not links either.
	for _, d := range []string{a.dir, a.oracles} {
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			return err
		}
		o := outfile.Output{Setting: "config", Path: d, Note: "a score audit's folder in the experiment's out folder"}
		if err := outfile.CheckResultsDir(o, []outfile.Input{{Name: "dataset " + r.ds.Path, Path: r.ds.Path, Tree: true}},
			append(scoring.Entries, "log.jsonl")...); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	lg, err := r.createLog(filepath.Join(a.dir, "log.jsonl"))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer lg.close()
	j, err := r.unlearnJob(ch, t.fs, t.seed, lg)
	if err != nil {
		return err
	}
	tr := r.cfg.Train
	aug, err := data.ParseAugment(tr.Augment)
	if err != nil {
		return err
	}
	job := scoring.Job{ModelPath: t.orig, Suite: j.Suite, K: sc.K, Dir: a.dir, OracleDir: a.oracles, Method: j,
		Oracle: unlearn.RetrainJob{Epochs: tr.Epochs, LR: tr.LR, BatchSize: tr.BatchSize, Momentum: tr.Momentum,
			WeightDecay: tr.WeightDecay, Schedule: tr.Schedule, Augment: aug, Seed: sc.OracleSeed},
		RetainSample: sc.RetainSample, TestSample: sc.TestSample, Tool: r.job.Tool,
		Bootstrap: score.BootstrapOptions{Resamples: 200},
		Info:      lg.info, Bar: lg.bar,
		Task: func(name, state string) { r.say(what+": "+name, state, "") }}
	o, err := scoring.Run(ctx, job)
	if err != nil {
		return lg.fail(what, err)
	}
	lg.result("json", o.JSONPath, "html", o.ReportPath)
	return nil
}

// scoreMarkdown is RESULTS.md's section on the scored rows: per forget set,
// each row's forgetting score with its interval beside the grid's SVC MIA
// gap, and the two rankings.
func (r *state) scoreMarkdown(rows []experiment.Row) (string, error) {
	sc := r.cfg.Score
	if sc == nil || len(r.audits) == 0 {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Per-example forgetting score (K = %d)\n\n", sc.K)
	fmt.Fprintf(&b, "The NeurIPS 2023 competition's score (docs/SCORE.md) of the rows named in the config's score "+
		"block, on seed %d's\n", sc.Seed)
	fmt.Fprintf(&b, "original and forget set: %d models retrained from scratch with the grid's recipe (seeds %d + k) "+
		"against %d runs of\n", sc.K, sc.OracleSeed, sc.K)
	b.WriteString("each row (seeds seed + k); F is the forget quality, the final score F · RA_u/RA_r · " +
		"TA_u/TA_r, KLoM " +
		"the mean\n")
	fmt.Fprintf(&b, "over forget examples (lower: closer to retraining); intervals are 95 %% bootstrap intervals over "+
		"the models; retain and\n")
	fmt.Fprintf(&b, "test accuracies on samples of %d and %d examples. SVC MIA is SalUn's attack (true-label "+
		"confidence) fitted per model,\n", sc.RetainSample, sc.TestSample)
	b.WriteString("the share of the forget set called non-member averaged over each side's models; the ranking by MIA, " +
		"the usual\n")
	b.WriteString("population-level evidence, orders the rows by its gap |unlearned − retrained| (by the grid's |Δ " +
		"MIA|, the mean over its\n")
	b.WriteString("seeds against one oracle each, where the audit has no SVC verdicts). U-LiRA is the per-example " +
		"likelihood-ratio\n")
	b.WriteString("attack (Hayes et al., SaTML 2025): the balanced accuracy, averaged over the forget set, of telling " +
		"an unseen model's side\n")
	b.WriteString("from its margin on the example after fitting both sides' margins on the other models (0.5: " +
		"indistinguishable; lower\n")
	b.WriteString("ranks first); AUC pools every (example, model) ratio. Folders: score/ (score.json and score.html per " +
		"row).\n")
	bySet := map[string][]scoreAudit{}
	var sets []string
	for _, a := range r.audits {
		if _, ok := bySet[a.forgetSet]; !ok {
			sets = append(sets, a.forgetSet)
		}
		bySet[a.forgetSet] = append(bySet[a.forgetSet], a)
	}
	for _, fs := range sets {
		type line struct {
			a         scoreAudit
			rep       *schema.ScoreReport
			mia       float64
			hasMIA    bool
			gridMIA   float64
			hasGrid   bool
			final     float64
			scoreRank int
			miaRank   int
			uliraRank int
		}
		var lines []*line
		missing := []string{}
		for _, a := range bySet[fs] {
			raw, err := readOut(r.cfg.Out, filepath.Join(a.dir, "score.json"), "score file", maxScoreSize)
			if errors.Is(err, os.ErrNotExist) {
				missing = append(missing, experiment.MarkdownText(a.method))
				continue
			} else if err != nil {
				return "", err
			}
			rep, err := parseScore(raw, filepath.Join(a.dir, "score.json"))
			if err != nil {
				return "", err
			}
			l := &line{a: a, rep: rep, final: rep.ForgetQuality.Estimate}
			if rep.FinalScore != nil {
				l.final = rep.FinalScore.Estimate
			}
			for _, row := range rows {
				if row.ForgetSet == fs && row.Name == a.method && row.DMIA.N > 0 {
					l.gridMIA, l.hasGrid = math.Abs(row.DMIA.Mean), true
				}
			}
			// The ranking by MIA takes the audit's own SVC MIA (K models a
			// side) when both sides recorded it, else the grid's.
			if u, rt := rep.SVCMIA.Unlearned, rep.SVCMIA.Retrained; u != nil && rt != nil {
				l.mia, l.hasMIA = math.Abs(*u-*rt), true
			} else {
				l.mia, l.hasMIA = l.gridMIA, l.hasGrid
			}
			lines = append(lines, l)
		}
		fmt.Fprintf(&b, "\n### %s\n\n", experiment.MarkdownText(fs))
		if len(lines) == 0 {
			fmt.Fprintf(&b, "Not scored yet: %s.\n", strings.Join(missing, ", "))
			continue
		}
		byScore := slices.Clone(lines)
		sort.SliceStable(byScore, func(i, j int) bool { return byScore[i].final > byScore[j].final })
		for i, l := range byScore {
			l.scoreRank = i + 1
		}
		byMIA := slices.Clone(lines)
		sort.SliceStable(byMIA, func(i, j int) bool {
			if byMIA[i].hasMIA != byMIA[j].hasMIA {
				return byMIA[i].hasMIA
			}
			return byMIA[i].mia < byMIA[j].mia
		})
		for i, l := range byMIA {
			if l.hasMIA {
				l.miaRank = i + 1
			}
		}
		// The ranking by U-LiRA: the lower the attack's accuracy, the
		// harder the unlearned models are to tell from retrained ones;
		// audits gathered before U-LiRA existed have none and no rank.
		byULiRA := slices.Clone(lines)
		sort.SliceStable(byULiRA, func(i, j int) bool {
			a, c := byULiRA[i].rep.ULiRA, byULiRA[j].rep.ULiRA
			if (a != nil) != (c != nil) {
				return a != nil
			}
			return a != nil && a.Accuracy.Estimate < c.Accuracy.Estimate
		})
		for i, l := range byULiRA {
			if l.rep.ULiRA != nil {
				l.uliraRank = i + 1
			}
		}
		b.WriteString("| Method | F | final score | KLoM forget | U-LiRA accuracy | U-LiRA AUC | forget acc. unlearned / " +
			"retrained | test acc. unlearned / retrained | SVC MIA unlearned / retrained | \\|Δ MIA\\| (grid) | " +
			"rank by score " +
			"| rank by MIA | rank by U-LiRA |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		iv := func(v schema.ScoreInterval) string { return fmt.Sprintf("%.3f [%.3f, %.3f]", v.Estimate, v.Lo, v.Hi) }
		pct := func(v *float64) string {
			if v == nil {
				return "—"
			}
			return fmt.Sprintf("%.2f", 100**v)
		}
		for _, l := range lines {
			rep := l.rep
			fin := "—"
			if rep.FinalScore != nil {
				fin = iv(*rep.FinalScore)
			}
			grid, mr, svc := "—", "—", "—"
			if l.hasGrid {
				grid = fmt.Sprintf("%.2f", 100*l.gridMIA)
			}
			if l.hasMIA {
				mr = fmt.Sprint(l.miaRank)
			}
			if rep.SVCMIA.Unlearned != nil || rep.SVCMIA.Retrained != nil {
				svc = pct(rep.SVCMIA.Unlearned) + " / " + pct(rep.SVCMIA.Retrained)
			}
			ulira, auc, ur := "—", "—", "—"
			if rep.ULiRA != nil {
				ulira, auc, ur = iv(rep.ULiRA.Accuracy), fmt.Sprintf("%.3f", rep.ULiRA.AUC), fmt.Sprint(l.uliraRank)
			}
			u, rt := rep.Accuracy.Unlearned, rep.Accuracy.Retrained
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.2f / %.2f | %.2f / %.2f | %s | %s | %d | %s | %s |\n",
				experiment.MarkdownText(l.a.method), iv(rep.ForgetQuality), fin, iv(rep.KLoM.Forget), ulira, auc,
				100*u.Forget, 100*rt.Forget, 100*u.Test, 100*rt.Test, svc, grid, l.scoreRank, mr, ur)
		}
		if len(missing) > 0 {
			fmt.Fprintf(&b, "\nNot scored yet: %s.\n", strings.Join(missing, ", "))
		}
		var closed []string
		for _, l := range lines {
			if l.rep.KLoM.Bins != schema.ScoreKLoMDigitize {
				closed = append(closed, experiment.MarkdownText(l.a.method))
			}
		}
		if len(closed) > 0 {
			fmt.Fprintf(&b, "\nKLoM of %s: computed with the last histogram bin closed (score.json written before "+
				"issue 47, or\n"+
				"with CloseLastBin), not with the published code's bins, so it is not comparable with published KLoM "+
				"(docs/SCORE.md,\n"+
				"\"KLoM's bins\"); `%s` recomputes it from the rows' tasks/ folders, which are not committed.\n",
				strings.Join(closed, ", "), r.command("score", setting.Of("gather")))
		}
	}
	return b.String(), nil
}

// checkScore checks the values of a score.json that RESULTS.md shows:
// accuracies, SVC MIA shares, U-LiRA's accuracy and AUC and the forget
// quality in [0, 1], and the intervals' bounds, the final score and KLoM
// within ±1e9 (so that none prints as a number of hundreds of digits or as
// +Inf). The error names the field.
// parseScore decodes a score.json read back for RESULTS.md (name is the
// file, for errors) and checks its values (checkScore): a value out of
// its range is damage (ErrRecords), with the repair.
func parseScore(raw []byte, name string) (*schema.ScoreReport, error) {
	var rep schema.ScoreReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("%w: %s: not a score file (%v); delete it and run the experiment "+
			"again (the audit gathers it again from its tasks)",
			experiment.ErrRecords, name, err)
	}
	if err := checkScore(&rep); err != nil {
		return nil, fmt.Errorf("%w: %s: %v; the file was edited or corrupted: delete it and run the "+
			"experiment again (the audit gathers it again from its tasks)",
			experiment.ErrRecords, name, err)
	}
	return &rep, nil
}

// maxKLoM bounds a KLoM: a KL divergence between histograms whose empty
// retrained bins are floored at 1e-5 is at most about ln 1e5 = 11.5 nats
// (docs/SCORE.md). maxFinalScore bounds the final score, F (≤ 1) times
// two ratios of mean accuracies, each at most 1 ÷ the retrained models'
// accuracy: 1e6 allows a retrained accuracy of 0.1 %.
const (
	maxKLoM       = 12
	maxFinalScore = 1e6
)

func checkScore(rep *schema.ScoreReport) error {
	type field struct {
		name   string
		v      float64
		lo, hi float64
	}
	acc := func(side string, a schema.ScoreSplits) []field {
		p := "accuracy." + side + "."
		return []field{{p + "forget", a.Forget, 0, 1}, {p + "retain", a.Retain, 0, 1}, {p + "test", a.Test, 0, 1}}
	}
	// An interval's estimate lies in the quantity's range [lo, hi]; its
	// bounds are clipped to it since issue 64, and a file written before
	// may have them one range-width beyond (the bias-corrected interval),
	// never more: a KLoM of −1e8 is damage.
	iv := func(name string, i schema.ScoreInterval, lo, hi float64) []field {
		w := hi - lo
		return []field{{name + ".estimate", i.Estimate, lo, hi}, {name + ".lo", i.Lo, lo - w, hi + w},
			{name + ".hi", i.Hi, lo - w, hi + w}}
	}
	fs := append(acc("unlearned", rep.Accuracy.Unlearned), acc("retrained", rep.Accuracy.Retrained)...)
	fs = append(fs, iv("forget_quality", rep.ForgetQuality, 0, 1)...)
	fs = append(fs, iv("klom.forget", rep.KLoM.Forget, 0, maxKLoM)...)
	fs = append(fs, field{"klom.retain", rep.KLoM.Retain, 0, maxKLoM}, field{"klom.test", rep.KLoM.Test, 0, maxKLoM})
	if rep.FinalScore != nil {
		fs = append(fs, iv("final_score", *rep.FinalScore, 0, maxFinalScore)...)
	}
	if u := rep.ULiRA; u != nil {
		fs = append(fs, field{"ulira.auc", u.AUC, 0, 1})
		fs = append(fs, iv("ulira.accuracy", u.Accuracy, 0, 1)...)
	}
	for _, m := range []struct {
		name string
		v    *float64
	}{{"svc_mia.unlearned", rep.SVCMIA.Unlearned}, {"svc_mia.retrained", rep.SVCMIA.Retrained}} {
		if m.v != nil {
			fs = append(fs, field{m.name, *m.v, 0, 1})
		}
	}
	for _, f := range fs {
		if !(f.v >= f.lo && f.v <= f.hi) {
			return fmt.Errorf("%s %g: outside [%g, %g]", f.name, f.v, f.lo, f.hi)
		}
	}
	return nil
}
