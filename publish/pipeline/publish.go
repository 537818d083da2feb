package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/partial"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/publish/internal/artifact"
	"github.com/reloader-dev/reloader/publish/internal/chart"
	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/sbom"
)

func (r *run) publishArtifacts(ctx context.Context) error {
	for _, bi := range r.images {
		subject, err := partial.Descriptor(bi.img)
		if err != nil {
			return fmt.Errorf("describing %s %s: %w", bi.name, bi.platform.String(), err)
		}
		subject.Platform = nil
		for _, d := range bi.docs {
			art := artifact.Artifact{ArtifactType: d.MediaType,
				Layers: []artifact.Blob{{MediaType: d.MediaType, Data: d.Data, Annotations: map[string]string{
					image.AnnotationTitle: page.SBOMFileName(bi.name, bi.platform.String(), d.MediaType)}}},
				Annotations: map[string]string{image.AnnotationCreated: r.opts.Created.UTC().Format(time.RFC3339)},
				Subject:     subject}
			repo, err := name.NewRepository(bi.repo)
			if err != nil {
				return err
			}
			desc, err := art.Push(ctx, repo, "", r.ropts...)
			if err != nil {
				return err
			}
			a := release.Artifact{Kind: release.KindSBOM, Name: bi.name, Variant: bi.variant, Platform: bi.platform.String(),
				Repository: bi.repo, ArtifactType: d.MediaType, Subject: bi.digest.String(), PredicateType: predicateFor(d.MediaType)}
			if err := r.addLockEntry(a, repo.Digest(desc.Digest.String())); err != nil {
				return err
			}
		}
	}
	for _, dir := range r.opts.ChartDirs {
		pkg, err := chart.Package(chart.Options{Dir: dir, Created: r.opts.Created, OutDir: filepath.Join(r.opts.OutDir, "charts")})
		if err != nil {
			return err
		}
		if pkg.Library {
			fmt.Fprintf(r.log, "    chart %s is a library chart: not published\n", pkg.Name)
			continue
		}
		repo := r.opts.Registry + "/charts/" + pkg.Name
		tag, err := name.NewTag(repo + ":" + pkg.Version)
		if err != nil {
			return fmt.Errorf("chart %s: %w", pkg.Name, err)
		}
		desc, err := pkg.Artifact(r.opts.Source).Push(ctx, tag.Context(), "", r.ropts...)
		if err != nil {
			return err
		}
		if err := r.addLockEntry(release.Artifact{Kind: release.KindChart, Name: pkg.Name, Repository: repo, Tag: pkg.Version,
			ArtifactType: chart.ConfigMediaType}, tag.Context().Digest(desc.Digest.String())); err != nil {
			return err
		}
		fmt.Fprintf(r.log, "    chart %s %s %s\n", pkg.Name, pkg.Version, desc.Digest)
	}
	return nil
}

func predicateFor(mediaType string) string {
	switch mediaType {
	case sbom.MediaTypeCycloneDX:
		return sign.PredicateCycloneDX
	case sbom.MediaTypeSPDX3:
		return sign.PredicateSPDX3
	}
	return sign.PredicateSPDX
}
