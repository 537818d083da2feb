package app

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// newLogger builds the process logger from the original's --log-format and
// --log-level values.
func newLogger(format, level string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	switch strings.ToLower(level) {
	case "trace", "debug":
		lv = slog.LevelDebug
	case "info", "":
		lv = slog.LevelInfo
	case "warning", "warn":
		lv = slog.LevelWarn
	case "error", "fatal", "panic":
		lv = slog.LevelError
	default:
		return nil, fmt.Errorf("--log-level=%q: want trace, debug, info, warning, error, fatal or panic", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format=%q: unsupported logging formatter (want \"\" or json)", format)
}
