package data

import "github.com/unlearn-tool/unlearn/internal/setting"

// OpenSettings opens the dataset of the data, mean and std settings as a
// caller gives them: path ("" for the bundled demo data, Bundled) and the
// per-channel values as ParseValues reads them. bundled says the demo data
// was opened for want of a path. A bad setting is a *setting.Error naming
// it; the others are Open's.
func OpenSettings(path, mean, std string) (ds *Dataset, bundled bool, err error) {
	m, err := ParseValues(mean, false)
	if err != nil {
		return nil, false, setting.Errorf("mean", " %q: %v", mean, err)
	}
	s, err := ParseValues(std, true)
	if err != nil {
		return nil, false, setting.Errorf("std", " %q: %v", std, err)
	}
	if path == "" {
		if path, err = BundledPath(); err != nil {
			return nil, false, err
		}
		bundled = true
	}
	ds, err = Open(path, Options{Mean: m, Std: s})
	return ds, bundled, err
}

// BundledPath is Bundled, or an error naming the data setting when the
// demo data is not found.
func BundledPath() (string, error) {
	if p := Bundled(); p != "" {
		return p, nil
	}
	return "", setting.Textf("%s not given and the bundled demo data (testdata/fashion) was not found; pass %s",
		setting.Of("data"), setting.Of("data"))
}
