package decide

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/workload"
)

// encodeRecord is canonical (sorted keys, compact), so an unchanged state
// compares equal as text and causes no write.
func encodeRecord(m map[string]string) string {
	b, err := json.Marshal(m) // map keys are sorted by encoding/json
	if err != nil {
		return "{}"
	}
	return string(b)
}

// appliedRecord reads the applied-hashes record on v. An unreadable one is a
// problem to report and counts as no record: the current state is then taken
// as applied.
func appliedRecord(v workload.View) (record map[string]string, text string, had bool, problems []string) {
	text, had = v.Object.GetAnnotations()[annotations.Applied]
	record, err := parseRecord(text)
	if err != nil && had {
		problems = append(problems, fmt.Sprintf("annotation %s is unreadable (%v); taking the current state as applied", annotations.Applied, err))
		record, had = map[string]string{}, false
	}
	return record, text, had, problems
}

const maxRecordBytes = 256 << 10

// parseRecord reads an applied-hashes record ("" is an empty one); it is
// written by anyone who can edit the workload, so it is bounded.
func parseRecord(s string) (map[string]string, error) {
	m := map[string]string{}
	if s == "" {
		return m, nil
	}
	if len(s) > maxRecordBytes {
		return m, errors.New("too large")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if err := dec.Decode(&m); err != nil {
		return map[string]string{}, err
	}
	return m, nil
}
