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

package nodeclaims

import (
	"strings"
	"testing"
	"time"
)

func TestConvertExpiry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edits   []func(map[string]any)
		want    time.Time
		wantErr string
	}{
		{name: "absent never expires"},
		{name: "null never expires", edits: []func(map[string]any){withExpireAfter(nil)}},
		{name: "Never", edits: []func(map[string]any){withExpireAfter("Never")}},
		{name: "720h from creation", edits: []func(map[string]any){withExpireAfter("720h")}, want: created.Add(720 * time.Hour)},
		{name: "compound duration", edits: []func(map[string]any){withExpireAfter("1h30m")}, want: created.Add(90 * time.Minute)},
		{name: "zero expires at creation", edits: []func(map[string]any){withExpireAfter("0s")}, want: created},
		{name: "malformed", edits: []func(map[string]any){withExpireAfter("30 days")}, wantErr: `"30 days"`},
		{name: "never in lower case is malformed", edits: []func(map[string]any){withExpireAfter("never")}, wantErr: "invalid duration"},
		{name: "negative", edits: []func(map[string]any){withExpireAfter("-1h")}, wantErr: "negative"},
		{name: "not a string", edits: []func(map[string]any){withExpireAfter(int64(3600))}, wantErr: "int64, not a string"},
		{name: "spec not an object", edits: []func(map[string]any){func(o map[string]any) { o["spec"] = "x" }}},
		{name: "no creation time", edits: []func(map[string]any){withExpireAfter("1h"), func(o map[string]any) {
			delete(o["metadata"].(map[string]any), "creationTimestamp")
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, nc, err := convert(claim("nc", "node-a", tc.edits...))
			if !nc.ExpiresAt.Equal(tc.want) {
				t.Errorf("ExpiresAt = %v, want %v", nc.ExpiresAt, tc.want)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestConvertConditions(t *testing.T) {
	for _, tc := range []struct {
		name           string
		edits          []func(map[string]any)
		drifted, disru bool
	}{
		{name: "none"},
		{name: "Drifted True", edits: []func(map[string]any){withCondition("Drifted", "True")}, drifted: true},
		{name: "Drifted False", edits: []func(map[string]any){withCondition("Drifted", "False")}},
		{name: "Drifted Unknown", edits: []func(map[string]any){withCondition("Drifted", "Unknown")}},
		{name: "DisruptionReason True", edits: []func(map[string]any){withCondition("DisruptionReason", "True")}, disru: true},
		{name: "DisruptionReason False", edits: []func(map[string]any){withCondition("DisruptionReason", "False")}},
		{name: "both among others", edits: []func(map[string]any){
			withCondition("Ready", "True"), withCondition("Drifted", "True"),
			withCondition("Consolidatable", "True"), withCondition("DisruptionReason", "True"),
		}, drifted: true, disru: true},
		{name: "other conditions True", edits: []func(map[string]any){withCondition("Ready", "True"), withCondition("Consolidatable", "True")}},
		{name: "malformed conditions", edits: []func(map[string]any){func(o map[string]any) {
			o["status"].(map[string]any)["conditions"] = []any{"Drifted", nil, map[string]any{"type": 1, "status": true}}
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, nc, err := convert(claim("nc-1", "node-a", tc.edits...))
			if err != nil || k != (keys{node: "node-a"}) || nc.Name != "nc-1" {
				t.Fatalf("convert = %+v, %+v, %v", k, nc, err)
			}
			if nc.Drifted != tc.drifted || nc.Disrupting != tc.disru {
				t.Errorf("Drifted, Disrupting = %v, %v, want %v, %v", nc.Drifted, nc.Disrupting, tc.drifted, tc.disru)
			}
		})
	}
}

func TestConvertKeys(t *testing.T) {
	if k, _, _ := convert(claim("nc", "")); k != (keys{}) {
		t.Errorf("a NodeClaim without a node or providerID: keys = %+v", k)
	}
	if k, _, _ := convert(claim("nc", "", withProviderID("kwok://a"))); k != (keys{provider: "kwok://a"}) {
		t.Errorf("a launched NodeClaim: keys = %+v", k)
	}
	if k, _, _ := convert(claim("nc", "node-a", withProviderID("kwok://a"))); k != (keys{node: "node-a", provider: "kwok://a"}) {
		t.Errorf("a registered NodeClaim: keys = %+v", k)
	}
	odd := claim("nc", "", func(o map[string]any) { o["status"] = map[string]any{"nodeName": 7, "providerID": true} })
	if k, _, _ := convert(odd); k != (keys{}) {
		t.Errorf("keys that are not strings: keys = %+v", k)
	}
}
