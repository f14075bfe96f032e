package schema

// CompareSchema is the version tag of the comparison of several models
// with one oracle (CompareReport).
const CompareSchema = "unlearn.compare/v1"

// CompareReport is the JSON of `unlearn compare` (schema
// unlearn.compare/v1): the oracle's section and, per model, its section
// with Δ = oracle − model and the agreement of their predictions, all
// measured by one eval.Suite.
type CompareReport struct {
	Schema   string         `json:"schema"`
	Tool     string         `json:"tool"`
	Data     *DataInfo      `json:"data"`
	Forget   *ForgetInfo    `json:"forget"`
	Settings Settings       `json:"settings"`
	Oracle   *Section       `json:"oracle"`
	Models   []CompareEntry `json:"models"`
}

// CompareEntry is one model's section with its Δ to the oracle.
type CompareEntry struct {
	Section
	Delta     *Delta     `json:"delta"`
	Agreement *Agreement `json:"agreement"`
}
