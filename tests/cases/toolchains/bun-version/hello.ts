console.log(`bun ${Bun.version}`);
