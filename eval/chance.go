package eval

import (
	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

// ChanceSample is how many training examples (spread evenly over the split)
// TrainAccuracySample measures when there is no full evaluation to read
// the training accuracy from: enough to tell chance from a trained model
// (the standard error of an accuracy is at most 1.6 points on 1,000).
const ChanceSample = 1000

// Chance is the accuracy a model scores on split without having learnt
// from the images: that of always predicting the most frequent class (1 /
// classes on balanced data), and the threshold NearChance uses.
//
// The threshold is min(1.5 × chance, chance + 0.10). A model whose
// preprocessing differs from the data's (missing --mean/--std) collapses
// onto one or a few classes and scores about chance (10.08 % on 10
// balanced classes in the case that motivated the check), while a trained
// model scores several times chance on its own training split. 1.5×
// leaves room for sampling noise and a collapse onto two classes; the 10
// point cap keeps a weak but working binary model (say 70 % against 50 %)
// from being refused.
func Chance(split *data.Split) (chance, threshold float64) {
	counts := map[int]int{}
	most := 0
	for i := 0; i < split.Len(); i++ {
		c := split.Label(i)
		counts[c]++
		most = max(most, counts[c])
	}
	if split.Len() == 0 {
		return 0, 0
	}
	chance = float64(most) / float64(split.Len())
	return chance, min(1.5*chance, chance+0.10)
}

// NearChance returns a message when acc, a model's accuracy on the training
// split of ds, is at or below Chance's threshold: the likeliest cause is
// preprocessing that differs from the model's training, and the message
// advises the fix: the mean and std settings. It returns nil otherwise.
func NearChance(acc float64, ds *data.Dataset) setting.Message {
	chance, threshold := Chance(ds.Train)
	if chance == 0 || acc > threshold {
		return nil
	}
	mean, std := setting.Of("mean"), setting.Of("std")
	return setting.Msgf("the model scores %.2f%% on the training split of %s, near chance (%.2f%%, the most frequent "+
		"class's share): the data is probably not preprocessed as the model was trained; pass %s/%s as its training "+
		"normalized the images (for torchvision's Normalize((0.5,), (0.5,)) pass %s %s)", 100*acc, ds.Path, 100*chance,
		mean, std, setting.Use("mean", 0.5), setting.Use("std", 0.5))
}

// TrainAccuracySample measures m on up to ChanceSample training examples,
// spread evenly over the split: a cheap training accuracy for NearChance
// when the model is not evaluated in full.
func (s *Suite) TrainAccuracySample(m *graph.Model) (float64, error) {
	split := s.Data.Train
	n := min(split.Len(), ChanceSample)
	if n == 0 {
		return 0, setting.Errorf("data", " %s has an empty training split", s.Data.Path)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i * split.Len() / n
	}
	cl, err := infer.NewClassifier(m, s.Options.Runtime, s.Options.batch())
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	lg, err := cl.Logits(split, idx, nil)
	if err != nil {
		return 0, err
	}
	return infer.Accuracy(infer.Argmax(lg, cl.Classes()), split.Labels(idx)), nil
}
