import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export interface Jdk {
  label: string;
  home: string;
  java: string;
  feature: number;
}


function versionOf(java: string): number | undefined {
  try {
    const r = spawnSync(java, ['-version'], { encoding: 'utf8' });
    const m = /version "(\d+)/.exec(String(r.stderr));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The JDKs the end-to-end tests run on: the default JDK 17 and, where installed, Temurin 25. */
export function findJdks(): { available: Jdk[]; missing: string[] } {
  const wanted: { label: string; homes: string[]; feature: number }[] = [
    { label: 'jdk17', homes: ['/usr/lib/jvm/java-17-openjdk-amd64'], feature: 17 },
    { label: 'jdk25', homes: ['/usr/lib/jvm/temurin-25-jdk-amd64', '/usr/lib/jvm/java-25-openjdk-amd64'], feature: 25 },
  ];
  const available: Jdk[] = [];
  const missing: string[] = [];
  for (const w of wanted) {
    const home = w.homes.find((h) => fs.existsSync(path.join(h, 'bin', 'java')));
    const java = home && path.join(home, 'bin', 'java');
    if (home && java && versionOf(java) === w.feature) available.push({ label: w.label, home, java, feature: w.feature });
    else missing.push(`${w.label}: not installed (looked in ${w.homes.join(', ')})`);
  }
  return { available, missing };
}
