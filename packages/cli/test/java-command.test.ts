import { agentOptions, injectAgent } from '../src/java-command';

describe('injectAgent', () => {
  test('puts -agentpath right after a java launcher', () => {
    const l = injectAgent(['/usr/bin/java', '-cp', 'a.jar', 'Main', 'x'], '/p/libjportal.so', 'out=/t');
    expect(l.command).toBe('/usr/bin/java');
    expect(l.args).toEqual(['-agentpath:/p/libjportal.so=out=/t', '-cp', 'a.jar', 'Main', 'x']);
    expect(l.env.JAVA_TOOL_OPTIONS).toBe(process.env.JAVA_TOOL_OPTIONS);
  });

  test('goes through JAVA_TOOL_OPTIONS for wrapper scripts, keeping existing options', () => {
    const saved = process.env.JAVA_TOOL_OPTIONS;
    process.env.JAVA_TOOL_OPTIONS = '-Xmx1g';
    try {
      const l = injectAgent(['./bin/app', '--flag'], '/p/libjportal.so', 'out=/t');
      expect(l.command).toBe('./bin/app');
      expect(l.args).toEqual(['--flag']);
      expect(l.env.JAVA_TOOL_OPTIONS).toBe('-Xmx1g -agentpath:/p/libjportal.so=out=/t');
    } finally {
      if (saved === undefined) delete process.env.JAVA_TOOL_OPTIONS;
      else process.env.JAVA_TOOL_OPTIONS = saved;
    }
  });

  test('rejects an empty command', () => {
    expect(() => injectAgent([], '/p', '')).toThrow(/no command/);
  });
});

describe('agentOptions', () => {
  test('joins defined options, booleans as 0/1', () => {
    expect(agentOptions({ out: '/t', collector: 42, snapshot: true, classes: false, ring_mb: undefined })).toBe(
      'out=/t,collector=42,snapshot=1,classes=0',
    );
  });
  test('refuses values containing the separator', () => {
    expect(() => agentOptions({ out: '/a,b' })).toThrow(/must not contain ','/);
  });
});
