/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/e2e'],
  testTimeout: 300000,
  // print the failing tests again at the end, whatever the number of suites (CI keeps the log's tail)
  reporters: [['default', { summaryThreshold: 0 }]],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  moduleNameMapper: { '^@jportal/([a-z-]+)$': '<rootDir>/../packages/$1/src/index.ts' },
};
