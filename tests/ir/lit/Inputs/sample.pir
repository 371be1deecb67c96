# A tiny GPT-shaped program written by hand: stacked blocks, calls, a fold.
const V = 10
dim T = 8

param tok : R[V:10, D:4] = normal(0.02)
param blocks.ln.g : R[2, 4] = ones stack 1
param blocks.ln.b : R[2, 4] = zeros stack 1
param blocks.w : R[2, 4, 4] = uniform(-0.5, 0.5) stack 1
param ln_f.g : R[4] = ones
param ln_f.b : R[4] = zeros
param head : R[4, 10] = zeros

fn LayerNorm.apply module LayerNorm ($0 x : R[T:8, D:4]) -> R[T:8, D:4] {
  %0 = mean($0) axes=[1] : R[8, 1]
  %1 = sub($0, %0) : R[8, 4]
  %2 = mul(%1, %1) : R[8, 4]
  %3 = mean(%2) axes=[1] : R[8, 1]
  %4 = literal "1e-5" : R
  %5 = add(%3, %4) : R[8, 1]
  %6 = rsqrt(%5) : R[8, 1]
  %7 = mul(%1, %6) : R[8, 4]
  %8 = param "g" : R[4]
  %9 = mul(%7, %8) : R[8, 4]
  %10 = param "b" : R[4]
  %11 = add(%9, %10) : R[T:8, D:4]
  return %11
}

fn Block.apply module Block ($0 x : R[8, 4]) -> R[8, 4] {
  %0 = call @LayerNorm.apply($0) path="ln" : R[8, 4]
  %1 = param "w" : R[4, 4]
  %2 = contract(%0, %1) spec="td,de->te" : R[8, 4]
  %3 = gelu_tanh(%2) : R[8, 4]
  %4 = dropout(%3) rate=0.1 : R[8, 4]
  %5 = add($0, %4) : R[8, 4]
  return %5
}

fn GPT.apply module GPT ($0 tokens : Z[8]) -> R[8, 10] {
  %0 = param "tok" : R[10, 4]
  %1 = embed(%0, $0) : R[8, 4]
  %2 = fold @Block.apply(%1) path="blocks" : R[8, 4]
  %3 = call @LayerNorm.apply(%2) path="ln_f" : R[8, 4]
  %4 = param "head" : R[4, 10]
  %5 = contract(%3, %4) spec="td,dv->tv" : R[8, 10]
  return %5
}

entry loss module GPT ($0 tokens : Z[9]) -> R {
  %0 = slice($0) axes=[0] starts=[0] stops=[8] : Z[8]
  %1 = slice($0) axes=[0] starts=[1] stops=[9] : Z[8]
  %2 = call @GPT.apply(%0) : R[8, 10]
  %3 = cross_entropy(%2, %1) : R
  return %3
}
