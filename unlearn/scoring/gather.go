package scoring

import (
	"time"

	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/eval/score"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/schema"
)

// gather reads every task's result, scores the ensemble and writes
// score.json and the HTML section.
func (r *state) gather() (*schema.ScoreReport, error) {
	start := time.Now()
	job := &r.job
	k := job.K
	var ens score.Ensemble
	var uRetain, rRetain, uTest, rTest [][]float64
	var forgetU, forgetR []float64 // per example: models correct
	forgetU = make([]float64, len(job.Suite.Forget))
	forgetR = make([]float64, len(job.Suite.Forget))
	// SVC non-member shares per side, kept only where every task of the
	// side recorded its verdicts.
	svcU, svcR := make([]float64, len(job.Suite.Forget)), make([]float64, len(job.Suite.Forget))
	svcOK := map[string]bool{schema.ScoreOracle: true, schema.ScoreUnlearned: true}
	rep := &schema.ScoreReport{Schema: schema.ScoreSchema, Tool: job.Tool, MaxEpsilon: score.MaxEpsilon(k)}
	mean := func(c []int) float64 {
		s := 0
		for _, v := range c {
			s += v
		}
		return float64(s) / float64(max(len(c), 1))
	}
	for _, t := range job.tasks() {
		res, err := r.readTask(t)
		if err != nil {
			return nil, err
		}
		acc := schema.ScoreSplits{Forget: mean(res.Forget.Correct), Retain: mean(res.Retain.Correct),
			Test: mean(res.Test.Correct)}
		rep.Models = append(rep.Models, schema.ScoreModel{Kind: t.kind, Index: t.index, Seed: t.seed,
			ModelSHA256: res.ModelSHA256, Accuracy: acc, Timings: res.Timings})
		side, counts := &rep.Accuracy.Retrained, forgetR
		if t.kind == schema.ScoreOracle {
			ens.Retrained = append(ens.Retrained, res.Forget.Margins)
			ens.RetrainedRetainAcc = append(ens.RetrainedRetainAcc, acc.Retain)
			ens.RetrainedTestAcc = append(ens.RetrainedTestAcc, acc.Test)
			rRetain, rTest = append(rRetain, res.Retain.Margins), append(rTest, res.Test.Margins)
		} else {
			side, counts = &rep.Accuracy.Unlearned, forgetU
			ens.Unlearned = append(ens.Unlearned, res.Forget.Margins)
			ens.UnlearnedRetainAcc = append(ens.UnlearnedRetainAcc, acc.Retain)
			ens.UnlearnedTestAcc = append(ens.UnlearnedTestAcc, acc.Test)
			uRetain, uTest = append(uRetain, res.Retain.Margins), append(uTest, res.Test.Margins)
		}
		side.Forget += acc.Forget / float64(k)
		side.Retain += acc.Retain / float64(k)
		side.Test += acc.Test / float64(k)
		for i, c := range res.Forget.Correct {
			counts[i] += float64(c) / float64(k)
		}
		shares := svcR
		if t.kind == schema.ScoreUnlearned {
			shares = svcU
		}
		if len(res.Forget.SVCNonMember) != len(shares) {
			svcOK[t.kind] = false
		} else {
			for i, v := range res.Forget.SVCNonMember {
				shares[i] += float64(v) / float64(k)
			}
		}
	}
	sum, err := score.Summarize(ens, job.Bootstrap)
	if err != nil {
		return nil, err
	}
	klRetain, err := score.KLoMs(uRetain, rRetain, job.Bootstrap.KLoM, job.Bootstrap.Workers)
	if err != nil {
		return nil, err
	}
	klTest, err := score.KLoMs(uTest, rTest, job.Bootstrap.KLoM, job.Bootstrap.Workers)
	if err != nil {
		return nil, err
	}
	iv := func(i score.Interval) schema.ScoreInterval {
		return schema.ScoreInterval{Estimate: i.Estimate, Lo: i.Lo, Hi: i.Hi, Shift: i.Shift}
	}
	rep.Settings = schema.ScoreSettings{Schema: schema.ScoreSettingsSchema, Setup: r.setup}
	rep.Settings.Paths = schema.ScorePaths{Model: job.ModelPath, Data: job.Suite.Data.Path, Forget: job.Suite.ForgetPath}
	rep.ForgetQuality = iv(sum.F)
	if sum.Final != nil {
		f := iv(*sum.Final)
		rep.FinalScore = &f
	}
	rep.KLoM = schema.ScoreKLoM{Forget: iv(sum.MeanKLoM), Retain: meanOf(klRetain), Test: meanOf(klTest),
		Bins: schema.ScoreKLoMDigitize}
	if job.Bootstrap.KLoM.CloseLastBin {
		rep.KLoM.Bins = schema.ScoreKLoMClosed
	}
	if u := sum.ULiRA; u != nil {
		rep.ULiRA = &schema.ScoreULiRA{Accuracy: iv(*sum.ULiRAAccuracy), AUC: u.AUC, Folds: u.Folds, Shadows: u.Shadows,
			Targets: u.Targets, Variance: u.Variance}
	}
	rep.Bootstrap = schema.ScoreBootstrap{Resamples: sum.Resamples, Level: sum.Level, Seed: sum.Seed}
	for i, id := range job.Suite.Forget {
		e := sum.Forgetting.Examples[i]
		rep.Forget = append(rep.Forget, schema.ScoreForgetExample{ID: id, Epsilon: e.Value, How: e.How, Rule: e.Rule,
			FPR: e.FPR, FNR: e.FNR, RetrainedPositive: e.RetrainedPositive, Points: e.Points, KLoM: sum.KLoM[i],
			UnlearnedCorrect: forgetU[i], RetrainedCorrect: forgetR[i]})
		if svcOK[schema.ScoreUnlearned] {
			rep.Forget[i].UnlearnedSVCNonMember = &svcU[i]
		}
		if svcOK[schema.ScoreOracle] {
			rep.Forget[i].RetrainedSVCNonMember = &svcR[i]
		}
		if sum.ULiRA != nil {
			rep.Forget[i].ULiRA = &sum.ULiRA.Examples[i]
		}
	}
	meanPtr := func(v []float64) *float64 {
		m := meanOf(v)
		return &m
	}
	if svcOK[schema.ScoreUnlearned] {
		rep.SVCMIA.Unlearned = meanPtr(svcU)
	}
	if svcOK[schema.ScoreOracle] {
		rep.SVCMIA.Retrained = meanPtr(svcR)
	}
	for i, id := range r.retain {
		rep.Retain = append(rep.Retain, schema.ScoreExample{ID: id, KLoM: klRetain[i]})
	}
	for i, id := range r.test {
		rep.Test = append(rep.Test, schema.ScoreExample{ID: id, KLoM: klTest[i]})
	}
	rep.Timings.GatherS = time.Since(start).Seconds()
	js, err := report.JSON(rep)
	if err != nil {
		return nil, err
	}
	page, err := report.ScoreHTML(rep)
	if err != nil {
		return nil, err
	}
	if err := outfile.WriteFiles(map[string][]byte{job.JSONPath: js, job.ReportPath: page}); err != nil {
		return nil, err
	}
	return rep, nil
}

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}
