package data

import (
	"fmt"
	"strconv"
	"strings"
)

// Model metadata keys (ONNX metadata_props) for the normalization a model
// expects, comma-separated per-channel values as for --mean and --std. The
// tool reads them when no normalization was given and writes them into the
// models it writes, so that a model carries how its inputs are prepared.
const (
	MetaMean = "unlearn.mean"
	MetaStd  = "unlearn.std"
)

// MetaTrainEpochs is the model metadata key for the epochs the model was
// trained for (a decimal integer), set at export: the main command reads
// it, when --retrain-epochs is not given, to estimate what retraining
// from scratch would cost.
const MetaTrainEpochs = "unlearn.train_epochs"

// MaxTrainEpochs bounds MetaTrainEpochs (and --retrain-epochs): far above
// any recipe's epochs, low enough that the estimate stays a small number.
const MaxTrainEpochs = 100000

// MetadataTrainEpochs parses MetaTrainEpochs from a model's metadata: 0
// when absent; an error naming the key for anything but an integer in
// 1..MaxTrainEpochs.
func MetadataTrainEpochs(md map[string]string) (int, error) {
	v, ok := md[MetaTrainEpochs]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > MaxTrainEpochs {
		return 0, fmt.Errorf("metadata %s %s: want the epochs the model was trained for, an integer from 1 to %d",
			MetaTrainEpochs, quoteStart(v, 64), MaxTrainEpochs)
	}
	return n, nil
}

// MaxMetaValue bounds the length of the normalization metadata values: a
// comma-separated list of per-channel numbers is far shorter, and a longer
// value is refused before it is parsed or printed.
const MaxMetaValue = 4096

// MetadataNormalization parses the normalization a model's metadata
// records (MetaMean, MetaStd; nil when absent). Errors name the key and
// quote at most the value's first 64 bytes.
func MetadataNormalization(md map[string]string) (mean, std []float32, err error) {
	for i, key := range []string{MetaMean, MetaStd} {
		v := md[key]
		if len(v) > MaxMetaValue {
			return nil, nil, fmt.Errorf("metadata %s is %d bytes (%s); a per-channel list is at most %d: "+
				"re-export the model with its normalization (docs/EXPORTING.md)", key, len(v), quoteStart(v, 64), MaxMetaValue)
		}
		vals, err := ParseValues(v, i == 1)
		if err != nil {
			return nil, nil, fmt.Errorf("metadata %s %s: %v", key, quoteStart(v, 64), err)
		}
		if i == 0 {
			mean = vals
		} else {
			std = vals
		}
	}
	return mean, std, nil
}

// quoteStart quotes s, cut to its first n bytes (with the cut said).
func quoteStart(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:n]) + "…"
}
