// The images hardway builds for an offline cluster, by the names containerd stores them under: one
// table, so the containerd config (sandbox image), the smoke test and the archives agree.
import { join } from 'node:path';

/** The sandbox ("pause") image every pod starts with; containerd's sandbox_image names it. */
export const PAUSE_IMAGE = 'localhost/hardway/pause:1';

/** A small web server on port 80 (busybox httpd), the image `hardway smoke --web-image` can run offline. */
export const WEB_IMAGE = 'localhost/hardway/web:1';

/** The project's images/ directory (beside machines.txt): the archives `hardway images` loads. */
export function imagesDir(projectDir: string): string {
  return join(projectDir, 'images');
}

/** CoreDNS v1.8.3, built offline by `hardway build-images` (the release whose Kubernetes libraries are those of v1.20.2). */
export const COREDNS_IMAGE = 'localhost/hardway/coredns:1.8.3';

/** The registry an image name is pulled from, as containerd reads the name (docker.io when none is named). */
export function registryOf(image: string): string {
  const first = image.split('/')[0]!;
  return image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost') ? first : 'docker.io';
}
