package support

import (
	"os"
	"testing"
)

func FuzzParseTable(f *testing.F) {
	if data, err := os.ReadFile("../support.yaml"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ParseTable(data)
		if err == nil && len(tab.Series) == 0 {
			t.Error("a valid table lists at least one series")
		}
	})
}

func FuzzParseAdvisory(f *testing.F) {
	if data, err := os.ReadFile("testdata/advisories/RELOADER-2026-0001.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAdvisory(data)
		if err != nil {
			return
		}
		_ = a.Affects("v1.0.0")
		if len(a.Affected) == 0 {
			t.Error("a valid advisory affects some package")
		}
	})
}
