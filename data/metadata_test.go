package data

import (
	"strings"
	"testing"
)

// TestMetadataTrainEpochs: absent is 0, an integer in range (spaces
// around it allowed) is read, anything else is an error naming the key
// and quoting at most the value's start.
func TestMetadataTrainEpochs(t *testing.T) {
	for v, want := range map[string]int{"30": 30, " 8\n": 8, "1": 1, "100000": 100000} {
		if n, err := MetadataTrainEpochs(map[string]string{MetaTrainEpochs: v}); err != nil || n != want {
			t.Errorf("%q: %d, %v; want %d", v, n, err, want)
		}
	}
	if n, err := MetadataTrainEpochs(map[string]string{MetaMean: "0.5"}); n != 0 || err != nil {
		t.Errorf("absent: %d, %v", n, err)
	}
	for _, v := range []string{"", "0", "-3", "2.5", "thirty", "100001", "99999999999999999999", strings.Repeat("9", 5000)} {
		_, err := MetadataTrainEpochs(map[string]string{MetaTrainEpochs: v})
		if err == nil || !strings.Contains(err.Error(), MetaTrainEpochs) || len(err.Error()) > 300 {
			t.Errorf("%.20q: %v", v, err)
		}
	}
}
