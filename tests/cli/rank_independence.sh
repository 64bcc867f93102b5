# The same deck at 1, 2 and 3 ranks: every dataset of the run files agrees to 1e-12.
source "$(dirname "$0")/common.sh"
deck=(transformer --model.N=50 --model.d=6 --model.L=60 --model.T=3 --mlp.width=128 --mlp.activation=gelu
      --mlp.sigma_u=0.2 --attention.key=gaussian --attention.value=gaussian --attention.beta=1.5 --run.tile=7
      --diagnostics.snapshot_every=20 --run.progress_interval=100)
for np in 1 2 3; do run "$np" "${deck[@]}" --run.output=np$np.h5 > /dev/null; done
compare np1.h5 np2.h5 --tol 1e-12
compare np1.h5 np3.h5 --tol 1e-12
# Same rank count, same seed: bitwise.
run 2 "${deck[@]}" --run.output=again.h5 > /dev/null
compare np2.h5 again.h5 --tol 0

# The SDE (Heun, random-feature field, attention on) at 1, 2 and 3 ranks.
sde=(sde --model.N=40 --model.d=4 --model.L=50 --model.T=2 --noise.features=200 --mlp.activation=tanh
     --mlp.sigma_u=0.1 --attention.beta=2 --run.tile=6 --run.progress_interval=100)
for np in 1 2 3; do run "$np" "${sde[@]}" --run.output=sde$np.h5 > /dev/null; done
compare sde1.h5 sde2.h5 --tol 1e-12
compare sde1.h5 sde3.h5 --tol 1e-12
