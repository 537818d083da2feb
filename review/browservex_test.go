package review

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/reloader-dev/reloader/release"
)

// checkVEXOnPage reads, in the browser, the CSAF documents the page lists
// (by tracking id, with what each covers) and each VEX statement's dates,
// the one past its date marked.
func checkVEXOnPage(t *testing.T, ctx context.Context, l *release.Lock) {
	t.Helper()
	docs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#csaf tr[data-csaf]')].filter(r => r.offsetParent !== null).map(r => r.dataset.csaf + ' ' + r.children[1].textContent)`))
	vexID := "RELOADER-VEX-" + l.Version
	if err != nil || len(docs) != 2 || !strings.HasSuffix(docs[0], " csaf_security_advisory") || docs[1] != vexID+" csaf_vex" {
		t.Errorf("CSAF documents shown %q (%v), want the advisory and %s", docs, err, vexID)
	}
	covers, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#csaf tr[data-csaf="`+vexID+`"]').children[2].innerText`))
	if err != nil || !strings.Contains(covers, "CVE-2099-0001 in golang.org/x/sync: not_affected") || !strings.Contains(covers, "until 2026-11-01") {
		t.Errorf("the VEX document is shown covering %q (%v), want each statement with its dates", covers, err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#vex-statements tr[data-vulnerability]')].map(r => [...r.children].map(c => c.textContent).join(' | '))`))
	stated := l.Created.UTC().Format("2006-01-02")
	want := []string{
		"CVE-2099-0001 | golang.org/x/sync | not_affected | " + stated + " | 2027-01-31",
		"CVE-2099-0002 | golang.org/x/sync | affected | " + stated + " | 2026-11-01 (past its date: no longer holds)",
	}
	if err != nil || !slices.Equal(rows, want) {
		t.Errorf("VEX statements shown %q (%v), want %q", rows, err, want)
	}
	past, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#vex-statements tr[data-vulnerability="CVE-2099-0002"] td:last-child')).color`))
	if err != nil || past != "rgb(198, 40, 40)" {
		t.Errorf("the statement past its date is shown in %q (%v), want the page's warning colour", past, err)
	}
}
