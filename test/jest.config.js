/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/e2e'],
  testTimeout: 300000,
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  moduleNameMapper: { '^@jportal/([a-z-]+)$': '<rootDir>/../packages/$1/src/index.ts' },
};
