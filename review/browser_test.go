package review

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds Debian's chromium. Without it the test fails, naming the
// package, unless -short (make unit).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	// make test runs every test, in CI or not: a missing browser fails it
	// with the command to run rather than passing silently. make unit
	// (-short) is what runs without it.
	if testing.Short() {
		t.Skip("no chromium in PATH (-short)")
	}
	t.Fatal("no chromium in PATH: apt-get install -y chromium (make unit runs the tests that need no browser)")
	return ""
}

// TestReviewPageInHeadlessChromium opens the written review from disk in a
// real browser with the network disabled, as a reviewer on an air-gapped
// machine would, and uses the component filter, the image filter (on a
// release whose components are each listed once, with the images carrying
// them), the diff view and the SSDF map.
func TestReviewPageInHeadlessChromium(t *testing.T) {
	fs := releases(t)
	bin := chromium(t)
	rp := releasePolicy(t, "2027-01-31")
	// Three images: the program on two platforms, and its previous build
	// (the older x/sync) as a second image, so that the image filter has
	// rows to hide.
	shipped := withImage(t, withImage(t, fs[newSync], "app", "standard", "linux/arm64", "2", fs[newSync].sboms), "app-old", "standard", "linux/amd64", "3", fs[oldSync].sboms)
	r := build(t, shipped, gateResult(t, "clean.json", rp), rp)
	// The diff view is of the one-image releases, where x/sync was upgraded.
	r.Diff = Compare(build(t, fs[oldSync], gateResult(t, "high-fixed.json", rp), rp), build(t, fs[newSync], gateResult(t, "clean.json", rp), rp))
	dir := filepath.Join(t.TempDir(), "review")
	if err := Write(dir, fs[newSync].lock, r, r.Failures([]string{CheckLicence})); err != nil {
		t.Fatal(err)
	}

	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
		// Belt and braces beside the offline emulation below: nothing resolves
		// and every proxied request goes nowhere.
		chromedp.ProxyServer("127.0.0.1:9"), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	var mu sync.Mutex
	var problems, requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				problems = append(problems, "console."+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, "log "+string(e.Entry.Level)+": "+e.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}},
	}); err != nil {
		t.Fatalf("disabling the network: %v", err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.Join(dir, FileHTML)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("setting the viewport: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || title != "Procurement review: Reloader v1.0.1" {
		t.Errorf("title %q %v", title, err)
	}

	visible := func(rows string) []string {
		t.Helper()
		names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+"`"+rows+"`"+`)].filter(r => r.offsetParent !== null).map(r => r.children[1].textContent)`))
		if err != nil {
			t.Fatalf("reading %s: %v", rows, err)
		}
		return names
	}
	const componentRows, diffRows = "#component-table tbody tr", "#diff-components tr[data-change]"
	all := []string{"example.com/app", "golang.org/x/sync", "golang.org/x/sync", "stdlib"}
	if got := visible(componentRows); !slices.Equal(got, all) {
		t.Errorf("components shown before filtering: %q, want each once: %q", got, all)
	}
	t.Run("component filter", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"x/sync", []string{"golang.org/x/sync", "golang.org/x/sync"}},
			{"BSD-3", []string{"golang.org/x/sync", "golang.org/x/sync", "stdlib"}},
			{"noassertion", []string{"example.com/app"}},
			{"nothing-matches-this", nil},
			{"", all},
		} {
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').value = ''`), chromedp.SendKeys("#filter", tc.query)); err != nil {
				t.Fatal(err)
			}
			if tc.query == "" {
				// Setting the value fires no input event; typing and deleting does.
				if err := chromedp.Do(ctx, chromedp.SendKeys("#filter", "x\b")); err != nil {
					t.Fatal(err)
				}
			}
			if got := visible(componentRows); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				v, _ := chromedp.Run(ctx, chromedp.Value("#filter"))
				t.Errorf("filter %q (input holds %q) shows %q, want %q", tc.query, v, got, tc.want)
			}
		}
		shown, err := chromedp.Run(ctx, chromedp.Text("#shown"))
		if err != nil || shown != "4 of 4 shown" {
			t.Errorf("counter %q %v", shown, err)
		}
	})
	t.Run("image filter", func(t *testing.T) {
		versions := func() []string {
			t.Helper()
			v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#component-table tbody tr')].filter(r => r.offsetParent !== null).map(r => r.children[2].textContent)`))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		for _, tc := range []struct {
			image    string
			names    []string
			versions []string
		}{
			{"app-old linux/amd64", []string{"example.com/app", "golang.org/x/sync", "stdlib"}, []string{"UNKNOWN", oldSync, "go1.26.8"}},
			{"app linux/arm64", []string{"example.com/app", "golang.org/x/sync", "stdlib"}, []string{"UNKNOWN", newSync, "go1.26.8"}},
			{"", all, []string{"UNKNOWN", oldSync, newSync, "go1.26.8"}},
		} {
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('image-filter'); s.value = '`+tc.image+`'; s.dispatchEvent(new Event('change')); })()`)); err != nil {
				t.Fatal(err)
			}
			if got, gotV := visible(componentRows), versions(); !slices.Equal(got, tc.names) || !slices.Equal(gotV, tc.versions) {
				t.Errorf("image %q shows %q at %q, want %q at %q", tc.image, got, gotV, tc.names, tc.versions)
			}
		}
		carriers, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#component-table tbody tr').children[0].innerText`))
		if err != nil || carriers != "app linux/amd64\napp linux/arm64\napp-old linux/amd64" {
			t.Errorf("example.com/app is shown as carried by %q (%v), want the three images", carriers, err)
		}
	})
	t.Run("SSDF map", func(t *testing.T) {
		practices, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#ssdf-map tr[data-practice]')].filter(r => r.offsetParent !== null).map(r => r.dataset.practice)`))
		if err != nil || !slices.Equal(practices, []string{"PS.1", "PS.2", "PS.3", "PW.4"}) {
			t.Errorf("SSDF practices shown %q (%v), want those this release has evidence for", practices, err)
		}
		notice, err := chromedp.Run(ctx, chromedp.Text("#ssdf-notice"))
		if err != nil || !strings.Contains(notice, "not a legal attestation") {
			t.Errorf("SSDF notice %q (%v)", notice, err)
		}
	})
	t.Run("diff view", func(t *testing.T) {
		for _, tc := range []struct {
			button string
			want   []string
		}{
			{"upgraded", []string{"golang.org/x/sync"}},
			{"added", nil},
			{"removed", nil},
			{"all", []string{"golang.org/x/sync"}},
		} {
			if err := chromedp.Do(ctx, chromedp.Click(`#diff-controls button[data-change="`+tc.button+`"]`)); err != nil {
				t.Fatal(err)
			}
			if got := visible(diffRows); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("diff view %q shows %q, want %q", tc.button, got, tc.want)
			}
			pressed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#diff-controls button[aria-pressed=true]').dataset.change`))
			if err != nil || pressed != tc.button {
				t.Errorf("pressed button %q %v, want %q", pressed, err, tc.button)
			}
		}
		before, err := chromedp.Run(ctx, chromedp.Text("#diff-components tr[data-change] td:nth-child(3)"))
		if err != nil || before != oldSync {
			t.Errorf("diff row's old version %q %v", before, err)
		}
	})

	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Errorf("screenshot is %dx%d, want 1280x800", b.Dx(), b.Dy())
	}
	out := filepath.Join(t.ArtifactDir(), "review-1280x800.png")
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (keep it with go test -artifacts -outputdir DIR)", out)

	t.Run("BSI TR-03183-2 v2.1 profile", func(t *testing.T) {
		// The fixture's SBOMs are made without the release configuration's
		// producer contact or a registry: the page says the profile fails
		// and lists, by component, what each lacks. The release carries an
		// advisory and two VEX statements, one past its date.
		vexed := withVEX(t, shipped)
		r, err := Build(Input{Lock: vexed.lock, SBOMs: vexed.sboms, Licences: repoLicencePolicy(t), Profile: ProfileBSI, Now: fixtureCreated,
			Identity: Identity{Signer: "public key sha256:test", Verification: "verified in test"}})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "review-bsi")
		if err := Write(dir, vexed.lock, r, r.Failures([]string{CheckMinimumElements})); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, FileHTML))); err != nil {
			t.Fatal(err)
		}
		profile, err := chromedp.Run(ctx, chromedp.Text("#profile"))
		if err != nil || !strings.Contains(profile, "bsi-tr-03183-2") || !strings.Contains(profile, "v2.1.0") {
			t.Errorf("profile %q (%v), want BSI TR-03183-2 v2.1.0", profile, err)
		}
		result, err := chromedp.Run(ctx, chromedp.Text("#profile-result"))
		if err != nil || !strings.HasPrefix(result, "Failed") {
			t.Errorf("profile result %q (%v), want Failed", result, err)
		}
		notChecked, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#ntia .not-checked').length`))
		// SPDX 2.3 is not a format v2.1 allows; SPDX 3.0.1 and CycloneDX
		// are, and are checked.
		if err != nil || notChecked != len(r.Images) {
			t.Errorf("%d SBOMs marked not checked (%v), want the %d SPDX 2.3 documents", notChecked, err, len(r.Images))
		}
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#missing-by-component tr')].slice(1).map(r => r.children[0].textContent + ': ' + r.children[3].textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		var app string
		for _, row := range rows {
			if strings.HasPrefix(row, "example.com/app@") {
				app = row
			}
		}
		if !strings.Contains(app, "Component creator") || !strings.Contains(app, "URI of the deployable form of the component") {
			t.Errorf("missing by component: the main module's row %q, want its creator and deployable URI named (rows %q)", app, rows)
		}
		if len(rows) != len(r.MissingByComponent()) {
			t.Errorf("%d rows by component, want %d", len(rows), len(r.MissingByComponent()))
		}
		// The CRA map, beside the SSDF map, is marked supporting material.
		notice, err := chromedp.Run(ctx, chromedp.Text("#cra-notice"))
		if err != nil || !strings.HasPrefix(notice, "Supporting material") {
			t.Errorf("CRA notice %q (%v)", notice, err)
		}
		items, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#cra-map tr[data-item]')].map(r => r.dataset.item)`))
		if err != nil || !slices.Contains(items, "(1)") {
			t.Errorf("CRA items %q (%v), want at least (1), the SBOMs", items, err)
		}
		checkVEXOnPage(t, ctx, vexed.lock)
	})

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page logged errors or warnings: %q", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the page requested %s", u)
		}
	}
	if len(requests) == 0 {
		t.Error("no request was seen at all; the network listener is not working")
	}
}
