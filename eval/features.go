package eval

import (
	"fmt"
	"math"
)

// Outputs are a model's logits on a group of examples, with the examples'
// labels.
type Outputs struct {
	Logits  []float32 // row-major [len(Labels), Classes]
	Labels  []int
	Classes int
}

// Len returns the number of examples.
func (o Outputs) Len() int { return len(o.Labels) }

// Subset returns the rows idx of o, copied.
func (o Outputs) Subset(idx []int) Outputs {
	c := o.Classes
	s := Outputs{Logits: make([]float32, len(idx)*c), Labels: make([]int, len(idx)), Classes: c}
	for k, i := range idx {
		copy(s.Logits[k*c:(k+1)*c], o.Logits[i*c:(i+1)*c])
		s.Labels[k] = o.Labels[i]
	}
	return s
}

// check reports malformed outputs; what names the group in the message.
func (o Outputs) check(what string) error {
	if o.Classes < 1 {
		return fmt.Errorf("%s: %d classes: %w", what, o.Classes, ErrShape)
	}
	if len(o.Logits) != len(o.Labels)*o.Classes {
		return fmt.Errorf("%s: %d logits for %d examples of %d classes: %w",
			what, len(o.Logits), len(o.Labels), o.Classes, ErrShape)
	}
	for i, y := range o.Labels {
		if y < 0 || y >= o.Classes {
			return fmt.Errorf("%s: example %d has label %d, outside [0, %d): %w", what, i, y, o.Classes, ErrShape)
		}
	}
	bad := 0
	for _, v := range o.Logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d logits are NaN or infinite: %w", what, bad, ErrNonFinite)
	}
	return nil
}

// Feature is one of the per-example features of SalUn's SVC_MIA.
type Feature int

// The features of SalUn's SVC_MIA, in its order.
const (
	Correctness Feature = iota // [argmax z = y]: 1 or 0
	Confidence                 // p_y, the softmax probability of the true label
	Entropy                    // −Σᵢ pᵢ log pᵢ
	MEntropy                   // Song & Mittal's modified entropy (see MEntropyVariant)
	Prob                       // the softmax vector p (Classes values)
)

// Features lists every Feature in SalUn's order.
var Features = []Feature{Correctness, Confidence, Entropy, MEntropy, Prob}

var featureNames = [...]string{"correctness", "confidence", "entropy", "m_entropy", "prob"}

// String returns the feature's name as used in metrics.json.
func (f Feature) String() string {
	if f < 0 || int(f) >= len(featureNames) {
		return fmt.Sprintf("Feature(%d)", int(f))
	}
	return featureNames[f]
}

// MEntropyVariant chooses how the modified entropy is computed.
type MEntropyVariant int

const (
	// MEntropySongMittal is Mentr of Song & Mittal (USENIX Security 2021),
	// the quantity SalUn's m_entropy is meant to compute:
	//
	//	−(1 − p_y)·log p_y − Σ_{i≠y} pᵢ·log(1 − pᵢ),
	//
	// every logarithm clipped below at log(1e-30), the constant of both
	// Song & Mittal's _log_value (−log max(p, 1e-30)) and SalUn's
	// torch.where(p > 0, p.log(), tensor(1e-30).log()).
	MEntropySongMittal MEntropyVariant = iota
	// MEntropySalUnCode reproduces SalUn's m_entropy
	// (OPTML-Group/Unlearn-Saliency, Classification/evaluation/SVC_MIA.py)
	// as written. It assigns modified_probs[:, labels], i.e. for every row
	// each class that occurs as a label anywhere in the group, and takes
	// log_reverse_prob from p rather than 1 − p, so a row gets
	//
	//	−Σ_{c∈L} (1 − p_c)·log p_c − Σ_{c∉L} p_c·log p_c
	//
	// with L the set of labels present in its group (shadow members,
	// shadow non-members and target each computed on their own), and
	// log p replaced by log(1e-30) only where p = 0. Like SalUn's code it
	// computes in float32, softmax included, so p_c underflows to 0 once
	// z_c is ~104 below the largest logit and log p_c becomes
	// log(1e-30) = −69.08 (logits [0, 150, 0, …] with label 0: 69.08, where
	// float64 gives 150); see salunMEntropy. When the target's
	// labels are a strict subset of the classes (class-wise or non-IID
	// forgetting) its values are on another scale than the shadow sets'.
	// Offered to reproduce published numbers, not as a measurement.
	MEntropySalUnCode
)

// String names the variant as recorded in metrics.json.
func (v MEntropyVariant) String() string {
	switch v {
	case MEntropySongMittal:
		return "song-mittal"
	case MEntropySalUnCode:
		return "salun-code"
	}
	return fmt.Sprintf("MEntropyVariant(%d)", int(v))
}

// logEps is the floor of every logarithm in the modified entropy.
var logEps = math.Log(1e-30)

// logEps32 is SalUn's torch.tensor(1e-30).log(): the float32 logarithm of
// the float32 nearest 1e-30 (−69.07755, within 4e-9 of log(1e-30)).
var logEps32 = float32(math.Log(float64(float32(1e-30))))

// salunMEntropy is one row of SalUn's m_entropy computed as its code does,
// in float32 (see MEntropySalUnCode): p = softmax(z) as torch computes it
// (max subtracted, exp, sum, divide), then
// −Σ_{c∈L} (1 − p_c)·log p_c − Σ_{c∉L} p_c·log p_c with log p_c replaced
// by log(1e-30) where p_c is 0. A logit gap above ~103.97 makes exp
// underflow to 0 in float32, so a true class that far below the arg-max
// contributes (1 − 0)·log(1e-30) = −69.08 where the float64 value would be
// −gap. Every operation rounds to float32 (the explicit conversions keep
// the compiler from fusing multiply-adds); the exponential and logarithm
// are float64's correctly rounded to float32, within an ulp of torch's,
// and the sum runs in index order where torch's vectorised reduction may
// not, so the result agrees with SalUn's to float32 rounding (~1e-6
// relative), not bit for bit.
func salunMEntropy(z []float32, inL []bool, p []float32) float64 {
	m := z[0]
	for _, t := range z {
		m = max(m, t)
	}
	var s float32
	for j, t := range z {
		p[j] = float32(math.Exp(float64(float32(t - m))))
		s += p[j]
	}
	var me float32
	for j := range z {
		pj := float32(p[j] / s)
		lp := logEps32
		if pj > 0 {
			lp = float32(math.Log(float64(pj)))
		}
		if inL[j] {
			me += float32(float32(1-pj) * lp)
		} else {
			me += float32(pj * lp)
		}
	}
	return -float64(me)
}

// FeatureValues holds the MIA features of a group of examples.
type FeatureValues struct {
	N, Classes  int
	Correctness []float64 // [N]
	Confidence  []float64 // [N]
	Entropy     []float64 // [N]
	MEntropy    []float64 // [N]
	Prob        []float64 // [N, Classes] row-major
	Loss        []float64 // [N] cross-entropy −log p_y (the loss attack's feature)
}

// Matrix returns feature f as a row-major [N, d] matrix (shared, not copied).
func (fv *FeatureValues) Matrix(f Feature) (x []float64, d int) {
	switch f {
	case Correctness:
		return fv.Correctness, 1
	case Confidence:
		return fv.Confidence, 1
	case Entropy:
		return fv.Entropy, 1
	case MEntropy:
		return fv.MEntropy, 1
	case Prob:
		return fv.Prob, fv.Classes
	}
	panic(fmt.Sprintf("eval: unknown feature %d", int(f)))
}

// ComputeFeatures computes every MIA feature of every example of o, in
// float64 from the float32 logits. o must be well formed (see Outputs).
//
// Numerics: with m = max z, eᵢ = exp(zᵢ − m) and S = Σ eᵢ, log pᵢ is
// (zᵢ − m) − log S and pᵢ = eᵢ/S; 1 − pᵢ is (S − eᵢ)/S except at the
// arg-max, where S − eᵢ would cancel and the sum of the other eⱼ is used.
// This keeps log(1 − pᵢ) accurate for confidently wrong predictions; the
// values are the formulas' exact ones to rounding, so they agree with an
// independent float64 computation (testdata/mia/make_mia_ref.py) to ~1e-15.
// Correctness compares the first arg-max of the logits with the label, as
// torch.argmax and numpy.argmax do.
func ComputeFeatures(o Outputs, v MEntropyVariant) *FeatureValues {
	n, c := o.Len(), o.Classes
	fv := &FeatureValues{
		N: n, Classes: c,
		Correctness: make([]float64, n),
		Confidence:  make([]float64, n),
		Entropy:     make([]float64, n),
		MEntropy:    make([]float64, n),
		Prob:        make([]float64, n*c),
		Loss:        make([]float64, n),
	}
	var inL []bool
	var p32 []float32
	if v == MEntropySalUnCode {
		p32 = make([]float32, c)
		inL = make([]bool, c)
		for _, y := range o.Labels {
			inL[y] = true
		}
	}
	e := make([]float64, c)
	logp := make([]float64, c)
	rest := make([]float64, c)
	for i := range n {
		z := o.Logits[i*c : (i+1)*c]
		y := o.Labels[i]
		amax := 0
		for j, t := range z {
			if t > z[amax] {
				amax = j
			}
		}
		m := float64(z[amax])
		var s float64
		for j, t := range z {
			e[j] = math.Exp(float64(t) - m)
			s += e[j]
		}
		logS := math.Log(s)
		var others float64
		for j, t := range z {
			logp[j] = (float64(t) - m) - logS
			if j != amax {
				rest[j] = s - e[j]
				others += e[j]
			}
		}
		rest[amax] = others
		p := fv.Prob[i*c : (i+1)*c]
		for j := range p {
			p[j] = e[j] / s
		}

		if amax == y {
			fv.Correctness[i] = 1
		}
		fv.Confidence[i] = p[y]
		fv.Loss[i] = -logp[y]
		var ent float64
		for j, pj := range p {
			if pj > 0 {
				ent += pj * logp[j]
			}
		}
		fv.Entropy[i] = -ent

		if v == MEntropySalUnCode {
			fv.MEntropy[i] = salunMEntropy(z, inL, p32)
			continue
		}
		var me float64
		for j, pj := range p {
			if j == y {
				me += (rest[j] / s) * max(logp[j], logEps)
			} else {
				me += pj * max(math.Log(rest[j])-logS, logEps)
			}
		}
		fv.MEntropy[i] = -me
	}
	return fv
}

// CrossEntropy returns each example's loss −log softmax(z)_y, computed in
// float64 as in ComputeFeatures.
func CrossEntropy(o Outputs) []float64 {
	n, c := o.Len(), o.Classes
	out := make([]float64, n)
	for i := range n {
		z := o.Logits[i*c : (i+1)*c]
		m := float64(z[0])
		for _, t := range z {
			m = max(m, float64(t))
		}
		var s float64
		for _, t := range z {
			s += math.Exp(float64(t) - m)
		}
		out[i] = -((float64(z[o.Labels[i]]) - m) - math.Log(s))
	}
	return out
}
