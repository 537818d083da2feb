package registry

import "context"

// TagsPaged lists tags a few at a time, so a test sees pagination work
// without pushing a thousand tags.
func TagsPaged(ctx context.Context, r *Repository, pageSize int) ([]string, error) {
	return r.tags(ctx, pageSize)
}
