/*
Copyright The adminsched scheduler-plugins Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// The media types an OCI archive written by buildah, podman or docker holds.
const (
	mediaTypeIndex        = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest     = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeLayer        = "application/vnd.oci.image.layer.v1.tar"
	mediaTypeLayerGzip    = "application/vnd.oci.image.layer.v1.tar+gzip"
	mediaTypeDockerLayer  = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	maxBlobs              = 1000
	maxManifestsInIndexes = 64
)

type platform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
}

func (p platform) String() string { return p.OS + "/" + p.Architecture }

type descriptor struct {
	MediaType string    `json:"mediaType"`
	Digest    string    `json:"digest"`
	Size      int64     `json:"size"`
	Platform  *platform `json:"platform,omitempty"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	Manifests     []descriptor `json:"manifests"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type imageConfig struct {
	Created      string `json:"created"`
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// file is one path of an image's file system, after all layers.
type file struct {
	Mode     fs.FileMode
	UID, GID int
	Link     string
	Data     []byte
}

// image is one platform's image of an archive.
type image struct {
	// Platform is what the index says, if it says (a multi-platform index does).
	Platform *platform
	Config   imageConfig
	Files    map[string]file
}

// layout is an OCI image layout read from a tar archive: its files by name.
type layout map[string][]byte

func readLayout(archive string) (layout, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := layout{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", archive, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if len(l) >= maxBlobs {
			return nil, fmt.Errorf("%s: more than %d files", archive, maxBlobs)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", archive, hdr.Name, err)
		}
		l[path.Clean(hdr.Name)] = data
	}
	if _, ok := l["oci-layout"]; !ok {
		return nil, fmt.Errorf("%s: no oci-layout file: not an OCI archive", archive)
	}
	return l, nil
}

// blob returns the blob d names, checked against its digest and size.
func (l layout) blob(d descriptor) ([]byte, error) {
	algo, hexDigest, ok := strings.Cut(d.Digest, ":")
	if !ok || algo != "sha256" {
		return nil, fmt.Errorf("digest %q: want sha256:<hex>", d.Digest)
	}
	data, ok := l[path.Join("blobs", algo, hexDigest)]
	if !ok {
		return nil, fmt.Errorf("blob %s is not in the archive", d.Digest)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != hexDigest {
		return nil, fmt.Errorf("blob %s: content has digest sha256:%s", d.Digest, got)
	}
	if int64(len(data)) != d.Size {
		return nil, fmt.Errorf("blob %s: size %d, descriptor says %d", d.Digest, len(data), d.Size)
	}
	return data, nil
}

// images reads every image of the layout, following nested indexes.
func (l layout) images() ([]image, error) {
	var top index
	if err := json.Unmarshal(l["index.json"], &top); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	var imgs []image
	var walk func(idx index, depth int) error
	walk = func(idx index, depth int) error {
		if depth > 2 {
			return errors.New("indexes nested deeper than 2")
		}
		for _, d := range idx.Manifests {
			if len(imgs) >= maxManifestsInIndexes {
				return fmt.Errorf("more than %d manifests", maxManifestsInIndexes)
			}
			data, err := l.blob(d)
			if err != nil {
				return err
			}
			switch d.MediaType {
			case mediaTypeIndex:
				var sub index
				if err := json.Unmarshal(data, &sub); err != nil {
					return fmt.Errorf("index %s: %w", d.Digest, err)
				}
				if err := walk(sub, depth+1); err != nil {
					return err
				}
			case mediaTypeManifest:
				img, err := l.image(d, data)
				if err != nil {
					return fmt.Errorf("manifest %s: %w", d.Digest, err)
				}
				imgs = append(imgs, img)
			default:
				return fmt.Errorf("descriptor %s: media type %q: want an OCI index or manifest", d.Digest, d.MediaType)
			}
		}
		return nil
	}
	if err := walk(top, 0); err != nil {
		return nil, err
	}
	if len(imgs) == 0 {
		return nil, errors.New("index.json names no image")
	}
	return imgs, nil
}

func (l layout) image(d descriptor, data []byte) (image, error) {
	img := image{Platform: d.Platform, Files: map[string]file{}}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return img, err
	}
	cfg, err := l.blob(m.Config)
	if err != nil {
		return img, fmt.Errorf("config: %w", err)
	}
	if err := json.Unmarshal(cfg, &img.Config); err != nil {
		return img, fmt.Errorf("config: %w", err)
	}
	if len(img.Config.RootFS.DiffIDs) != len(m.Layers) {
		return img, fmt.Errorf("config lists %d layers (rootfs.diff_ids), manifest %d", len(img.Config.RootFS.DiffIDs), len(m.Layers))
	}
	for i, ld := range m.Layers {
		blob, err := l.blob(ld)
		if err != nil {
			return img, fmt.Errorf("layer %d: %w", i, err)
		}
		if err := applyLayer(img.Files, ld.MediaType, blob, img.Config.RootFS.DiffIDs[i]); err != nil {
			return img, fmt.Errorf("layer %d (%s): %w", i, ld.Digest, err)
		}
	}
	return img, nil
}

// applyLayer adds a layer's entries to files. Whiteouts are refused: an image
// built FROM scratch in one go has nothing to delete.
func applyLayer(files map[string]file, mediaType string, blob []byte, diffID string) error {
	var r io.Reader = bytes.NewReader(blob)
	switch mediaType {
	case mediaTypeLayer:
	case mediaTypeLayerGzip, mediaTypeDockerLayer:
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = zr
	default:
		return fmt.Errorf("media type %q: want %s or %s", mediaType, mediaTypeLayer, mediaTypeLayerGzip)
	}
	h := sha256.New()
	tee := io.TeeReader(r, h)
	tr := tar.NewReader(tee)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if name == "" {
			continue // the root directory itself
		}
		if strings.HasPrefix(path.Base(name), ".wh.") {
			return fmt.Errorf("%s: whiteout entry in an image built from scratch", name)
		}
		f := file{Mode: hdr.FileInfo().Mode(), UID: hdr.Uid, GID: hdr.Gid, Link: hdr.Linkname}
		if hdr.Typeflag == tar.TypeReg {
			if f.Data, err = io.ReadAll(tr); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		files[name] = f
	}
	// The rest of the stream (tar padding) counts toward the digest.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return err
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != diffID {
		return fmt.Errorf("uncompressed digest %s, config's diff_id %s", got, diffID)
	}
	return nil
}
