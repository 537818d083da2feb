package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Bounds on a tag listing: a registry (or whoever answers for it) must not
// be able to make a mirror read without end before it has verified anything.
const (
	maxTagPageBytes = 4 << 20
	maxTags         = 100000
	tagPageSize     = 1000
)

// Tags lists the repository's tags, following the registry's pagination
// (the Link header of the distribution spec). A repository the registry does
// not know has no tags: a first mirror into an empty registry is normal.
func (r *Repository) Tags(ctx context.Context) ([]string, error) {
	return r.tags(ctx, tagPageSize)
}

func (r *Repository) tags(ctx context.Context, pageSize int) ([]string, error) {
	var tags []string
	list := r.base + "/v2/" + r.path + "/tags/list?n=" + fmt.Sprint(pageSize)
	next := list
	for next != "" {
		page, link, err := r.tagPage(ctx, next)
		if err != nil {
			return nil, err
		}
		if len(page) > 0 && len(tags) > 0 && page[len(page)-1] == tags[len(tags)-1] {
			break // the registry ignored the offset and served the same page again
		}
		tags = append(tags, page...)
		if len(tags) > maxTags {
			return nil, fmt.Errorf("listing the tags of %s: more than %d tags", r.Name, maxTags)
		}
		if next, err = r.nextPage(next, link); err != nil {
			return nil, err
		}
		// Some registries (go-containerregistry's among them) cut a listing
		// at n without a Link header; the spec's "last" parameter asks for
		// the rest.
		if next == "" && link == "" && len(page) == pageSize {
			next = list + "&last=" + url.QueryEscape(page[len(page)-1])
		}
	}
	return tags, nil
}

func (r *Repository) tagPage(ctx context.Context, u string) (tags []string, link string, err error) {
	resp, err := r.do(ctx, http.MethodGet, u, nil, map[string]string{"Accept": "application/json"})
	if err != nil {
		return nil, "", fmt.Errorf("listing the tags of %s: %w", r.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, "", nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("listing the tags of %s: %w", r.Name, r.errorFrom(resp, "pull"))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTagPageBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading the tags of %s: %w", r.Name, err)
	}
	if len(b) > maxTagPageBytes {
		return nil, "", fmt.Errorf("listing the tags of %s: a page is larger than %d bytes", r.Name, maxTagPageBytes)
	}
	var doc struct {
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, "", fmt.Errorf("decoding the tags of %s: %w", r.Name, err)
	}
	return doc.Tags, resp.Header.Get("Link"), nil
}

// nextPage resolves a Link header (`<url>; rel="next"`) against the page it
// came with. The next page must stay on the same registry: a listing that
// points elsewhere would send the credentials there.
func (r *Repository) nextPage(cur, link string) (string, error) {
	if link == "" {
		return "", nil
	}
	target, _, ok := strings.Cut(strings.TrimSpace(link), ";")
	if !ok || !strings.Contains(link, `rel="next"`) {
		return "", nil
	}
	target = strings.Trim(strings.TrimSpace(target), "<>")
	base, err := url.Parse(cur)
	if err != nil {
		return "", fmt.Errorf("listing the tags of %s: %w", r.Name, err)
	}
	ref, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("listing the tags of %s: bad Link header %q: %w", r.Name, link, err)
	}
	u := base.ResolveReference(ref)
	if u.Host != base.Host || u.Scheme != base.Scheme {
		return "", fmt.Errorf("listing the tags of %s: the registry's next page %s is on another host", r.Name, u.Redacted())
	}
	return u.String(), nil
}
